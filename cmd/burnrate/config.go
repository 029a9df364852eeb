package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/connect/egress"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/seal"
)

// Config is everything Burnrate reads from its environment. There is no
// config file: every setting is an environment variable, documented in the
// README.
type Config struct {
	DatabaseURL    string // empty: start a private Postgres under DataDir
	DataDir        string
	Addr           string
	BaseURL        string
	LogLevel       slog.Level
	LogFormat      string
	MaxUploadBytes int64
	// ImportTimeout bounds one import's wall-clock time (IMPORT_TIMEOUT).
	ImportTimeout time.Duration
	RunMigrations bool
	// SMTPURL is where mail goes (empty: mail is kept in the outbox, not
	// sent); MailFrom is who it is from.
	SMTPURL  string
	MailFrom string
	Stripe   StripeConfig
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and
	// X-Forwarded-Proto are believed (none: the connecting address is the
	// client).
	TrustedProxies []netip.Prefix
	// MetricsToken lets /metrics on Addr answer with this bearer token;
	// MetricsAddr serves /metrics on a listener of its own, without one.
	// With neither, metrics are not served.
	MetricsToken string
	MetricsAddr  string
	// WebhookAllowPrivate lets Slack and webhook URLs reach loopback,
	// private and link-local addresses, other hosts than hooks.slack.com,
	// and plain http: for self-hosted installs whose receivers are inside.
	WebhookAllowPrivate bool
	// ConnectionsAllowHostCredentials lets a connection without a key of
	// its own sign in as this server (its AWS role, AWS_* variables,
	// ~/.aws): single-tenant installs only.
	ConnectionsAllowHostCredentials bool
	// ConnectionsEgress is where connections' endpoints may reach: public
	// addresses, and the hosts and ranges CONNECTIONS_ALLOW_PRIVATE lists.
	ConnectionsEgress egress.Policy
	// SecretKey seals connections' credentials (AES-256-GCM); nil when
	// SECRET_KEY is not set, which refuses new connections.
	SecretKey *seal.Key
	// OpenAIURL and AnthropicURL replace the providers' API addresses for
	// every connection (a gateway, a test server); empty means theirs.
	// BigQueryURL and GoogleTokenURL do so for GCP connections.
	OpenAIURL, AnthropicURL     string
	BigQueryURL, GoogleTokenURL string
}

// StripeConfig turns billing on. Without a secret key (self-hosted), billing
// is off and every feature is unlocked.
type StripeConfig struct {
	SecretKey     string
	WebhookSecret string
	// The Stripe Price ids of the paid plans, monthly and yearly
	// (STRIPE_PRICE_TEAM_MONTHLY, …; docs/billing.md).
	PriceTeamMonthly, PriceTeamYearly         string
	PriceBusinessMonthly, PriceBusinessYearly string
}

// billing is the billing package's configuration.
func (c Config) billing() billing.Config {
	return billing.Config{
		SecretKey:     c.Stripe.SecretKey,
		WebhookSecret: c.Stripe.WebhookSecret,
		BaseURL:       c.BaseURL,
		Prices: billing.Prices{
			TeamMonthly: c.Stripe.PriceTeamMonthly, TeamYearly: c.Stripe.PriceTeamYearly,
			BusinessMonthly: c.Stripe.PriceBusinessMonthly, BusinessYearly: c.Stripe.PriceBusinessYearly,
		},
	}
}

// app is the App's configuration.
func (c Config) app() app.Config {
	return app.Config{
		BaseURL: c.BaseURL, SMTPURL: c.SMTPURL, MailFrom: c.MailFrom, ImportTimeout: c.ImportTimeout,
		Billing: c.billing(), WebhookAllowPrivate: c.WebhookAllowPrivate,
		ConnectionsAllowHostCredentials: c.ConnectionsAllowHostCredentials, ConnectionsEgress: c.ConnectionsEgress,
		SecretKey: c.SecretKey, OpenAIURL: c.OpenAIURL, AnthropicURL: c.AnthropicURL,
		BigQueryURL: c.BigQueryURL, GoogleTokenURL: c.GoogleTokenURL,
	}
}

// loadConfig reads and validates the environment, reporting every problem
// at once rather than one per start.
func loadConfig(getenv func(string) string) (Config, error) {
	env := &envReader{getenv: getenv}
	or, secret := env.or, env.secret
	cfg := Config{
		DatabaseURL: secret("DATABASE_URL"),
		DataDir:     or("BURNRATE_DATA_DIR", ".burnrate"),
		Addr:        or("ADDR", ":8080"),
		BaseURL:     strings.TrimRight(or("BASE_URL", ""), "/"),
		LogFormat:   or("LOG_FORMAT", "text"),
		SMTPURL:     secret("SMTP_URL"),
		MailFrom:    or("MAIL_FROM", mail.DefaultFrom),
		Stripe: StripeConfig{
			SecretKey:     secret("STRIPE_SECRET_KEY"),
			WebhookSecret: secret("STRIPE_WEBHOOK_SECRET"),
			// Price ids are not secrets: they appear in Checkout's URLs.
			PriceTeamMonthly:     or("STRIPE_PRICE_TEAM_MONTHLY", ""),
			PriceTeamYearly:      or("STRIPE_PRICE_TEAM_YEARLY", ""),
			PriceBusinessMonthly: or("STRIPE_PRICE_BUSINESS_MONTHLY", ""),
			PriceBusinessYearly:  or("STRIPE_PRICE_BUSINESS_YEARLY", ""),
		},
	}
	if cfg.DatabaseURL != "" {
		if u, err := url.Parse(cfg.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			env.problem(errors.New("DATABASE_URL: want postgres://user:password@host:5432/dbname"))
		}
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(or("LOG_LEVEL", "info"))); err != nil {
		env.problem(fmt.Errorf("LOG_LEVEL: want debug, info, warn or error, got %q", getenv("LOG_LEVEL")))
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		env.problem(fmt.Errorf("LOG_FORMAT: want text or json, got %q", cfg.LogFormat))
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = listenURL(cfg.Addr)
	} else if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		env.problem(fmt.Errorf("BASE_URL: want an absolute URL such as https://burnrate.example.com, got %q", cfg.BaseURL))
	}
	mb, err := strconv.ParseInt(or("MAX_UPLOAD_MB", "512"), 10, 64)
	if err != nil || mb <= 0 {
		env.problem(fmt.Errorf("MAX_UPLOAD_MB: want a positive whole number of megabytes, got %q", getenv("MAX_UPLOAD_MB")))
	}
	cfg.MaxUploadBytes = mb << 20
	if cfg.ImportTimeout, err = time.ParseDuration(or("IMPORT_TIMEOUT", ingest.DefaultImportTimeout.String())); err != nil || cfg.ImportTimeout < time.Second {
		env.problem(fmt.Errorf("IMPORT_TIMEOUT: want a duration of a second or more, such as 30m or 1h, got %q", getenv("IMPORT_TIMEOUT")))
	}
	cfg.RunMigrations = env.boolean("RUN_MIGRATIONS", true)
	cfg.WebhookAllowPrivate = env.boolean("WEBHOOK_ALLOW_PRIVATE", false)
	cfg.ConnectionsAllowHostCredentials = env.boolean("CONNECTIONS_ALLOW_HOST_CREDENTIALS", false)
	if cfg.ConnectionsEgress, err = egress.ParseAllowList(getenv("CONNECTIONS_ALLOW_PRIVATE")); err != nil {
		env.problem(fmt.Errorf("CONNECTIONS_ALLOW_PRIVATE: %w; want host names, addresses or CIDR ranges, comma-separated (minio.internal,10.20.0.0/16)", err))
	}
	if (cfg.Stripe.SecretKey == "") != (cfg.Stripe.WebhookSecret == "") {
		env.problem(errors.New("STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET: set both (billing on) or neither (self-hosted, billing off)"))
	}
	env.errs = append(env.errs, checkPrices(cfg.Stripe)...)
	if cfg.SMTPURL != "" {
		// The error never repeats the URL: it may hold a password.
		if _, err := mail.NewSMTP(cfg.SMTPURL, mail.DefaultFrom); err != nil {
			env.problem(fmt.Errorf("SMTP_URL: %v; want smtp://user:password@host:587 (STARTTLS when offered), smtps://user:password@host:465, or smtp://host:1025 for a local mail catcher", err))
		}
	}
	for key, dst := range map[string]*string{"OPENAI_API_URL": &cfg.OpenAIURL, "ANTHROPIC_API_URL": &cfg.AnthropicURL,
		"BIGQUERY_API_URL": &cfg.BigQueryURL, "GOOGLE_TOKEN_URL": &cfg.GoogleTokenURL} {
		v := strings.TrimRight(or(key, ""), "/")
		if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			env.problem(fmt.Errorf("%s: want an absolute URL such as https://api.example.com, got %q", key, v))
		}
		*dst = v
	}
	if k := secret("SECRET_KEY"); k != "" {
		key, err := seal.ParseKey("SECRET_KEY", k)
		if err != nil {
			env.problem(err)
		}
		cfg.SecretKey = key
	}
	if _, err := mail.ParseFrom(cfg.MailFrom); err != nil {
		env.problem(fmt.Errorf("MAIL_FROM: %v", err))
	}
	proxies, err := parseProxies(getenv("TRUSTED_PROXIES"))
	if err != nil {
		env.problem(fmt.Errorf("TRUSTED_PROXIES: %w", err))
	}
	cfg.TrustedProxies = proxies
	cfg.MetricsToken, cfg.MetricsAddr = secret("METRICS_TOKEN"), or("METRICS_ADDR", "")
	env.errs = append(env.errs, checkMetrics(cfg)...)
	if len(env.errs) > 0 {
		return cfg, fmt.Errorf("configuration:\n  %w", joinLines(env.errs))
	}
	return cfg, nil
}

// envReader reads the environment for loadConfig, collecting every problem
// in errs.
type envReader struct {
	getenv func(string) string
	errs   []error
}

func (e *envReader) problem(err error) { e.errs = append(e.errs, err) }

// or returns the variable key, trimmed, or def when it is empty.
func (e *envReader) or(key, def string) string {
	if v := strings.TrimSpace(e.getenv(key)); v != "" {
		return v
	}
	return def
}

// secret returns the variable key, or the contents of the file KEY_FILE
// names (Docker/Kubernetes secrets).
func (e *envReader) secret(key string) string {
	if f := e.getenv(key + "_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			e.problem(fmt.Errorf("%s_FILE: %w", key, err))
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	return e.getenv(key)
}

// boolean returns the switch key: 1 or true, 0 or false, def when unset.
func (e *envReader) boolean(key string, def bool) bool {
	unset := "0"
	if def {
		unset = "1"
	}
	v := e.or(key, unset)
	switch v {
	case "1", "true":
		return true
	case "0", "false":
		return false
	}
	e.problem(fmt.Errorf("%s: want 1 or 0, got %q", key, v))
	return false
}

// checkMetrics wants a metrics token that is hard to guess and a metrics
// listener apart from the app's.
func checkMetrics(cfg Config) []error {
	var errs []error
	if t := cfg.MetricsToken; t != "" && (len(t) < 16 || strings.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r > '~' })) {
		errs = append(errs, errors.New("METRICS_TOKEN: want at least 16 printable ASCII characters without spaces (openssl rand -hex 32)"))
	}
	if cfg.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(cfg.MetricsAddr); err != nil || port == "" {
			errs = append(errs, fmt.Errorf("METRICS_ADDR: want host:port such as 127.0.0.1:9090, got %q", cfg.MetricsAddr))
		} else if cfg.MetricsAddr == cfg.Addr {
			errs = append(errs, fmt.Errorf("METRICS_ADDR: must differ from ADDR (%s)", cfg.Addr))
		}
	}
	return errs
}

// checkPrices wants every plan's price when billing is on, each a Stripe
// Price id (price_…) used once.
func checkPrices(sc StripeConfig) []error {
	prices := []struct{ key, v string }{
		{"STRIPE_PRICE_TEAM_MONTHLY", sc.PriceTeamMonthly}, {"STRIPE_PRICE_TEAM_YEARLY", sc.PriceTeamYearly},
		{"STRIPE_PRICE_BUSINESS_MONTHLY", sc.PriceBusinessMonthly}, {"STRIPE_PRICE_BUSINESS_YEARLY", sc.PriceBusinessYearly},
	}
	var errs []error
	seen := map[string]string{}
	for _, p := range prices {
		switch {
		case sc.SecretKey == "" && p.v != "":
			errs = append(errs, fmt.Errorf("%s: set, but billing is off (no STRIPE_SECRET_KEY)", p.key))
		case sc.SecretKey == "":
		case p.v == "":
			errs = append(errs, fmt.Errorf("%s: required with STRIPE_SECRET_KEY: the id of the plan's Stripe Price, such as price_1Px…", p.key))
		case !strings.HasPrefix(p.v, "price_"):
			errs = append(errs, fmt.Errorf("%s: want a Stripe Price id (price_…), got %q", p.key, p.v))
		case seen[p.v] != "":
			errs = append(errs, fmt.Errorf("%s: the same price as %s; each plan and interval needs its own", p.key, seen[p.v]))
		default:
			seen[p.v] = p.key
		}
	}
	return errs
}

// parseProxies reads a comma-separated list of CIDR ranges (a bare address
// is a range of one).
func parseProxies(v string) ([]netip.Prefix, error) {
	var ps []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("want comma-separated CIDR ranges such as 10.0.0.0/8,2001:db8::/32, got %q", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Bits() == 0 {
			// Trusting every address lets any client choose its own, which
			// is what this setting exists to prevent.
			return nil, fmt.Errorf("%q trusts every address; list only the proxies' ranges", f)
		}
		ps = append(ps, p.Masked())
	}
	return ps, nil
}

// joinLines joins errors one per line, indented under "configuration:".
func joinLines(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "\n  "))
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// listenURL is where a server listening on addr is reached from this
// machine, for BASE_URL's default and what `burnrate demo` prints: the
// address's own host when it names one (127.0.0.1:9000, [::1]:9000),
// localhost when it listens on every address (:9000, 0.0.0.0:9000).
func listenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "http://localhost:8080"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
