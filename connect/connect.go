// Package connect pulls an org's spend on a schedule from where it already
// lives: the OpenAI and Anthropic admin APIs, billing exports that AWS
// delivers to a bucket and Azure Cost Management to a storage container,
// and the one Google writes to BigQuery. Every pull goes through the same path as an upload
// (ingest.Importer): the same parsers, all-or-nothing per file, the same
// dedupe and restatement rules, and an entry in the import history "via
// connection NAME". A puller's only job is to turn what the provider serves
// into files the parsers already read. See docs/connections.md.
//
// Credentials are sealed with the server's SECRET_KEY (Key) before they are
// stored, and never leave the server again: the store holds them sealed,
// pages show a hint, and Credentials print as "[redacted]" in logs.
package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/connect/egress"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
)

// What an API connection pulls. Each provider's cost report is its bill; its
// usage report is tokens, which the importer prices with the org's LLM
// prices. Pulling both would count the same spend twice, so a connection
// pulls one (docs/connections.md).
const (
	DataCosts = "costs"
	DataUsage = "usage"
)

// DefaultRestateDays is how many days before the last pull each run pulls
// again: the providers restate recent days' costs for a while.
const DefaultRestateDays = 3

// DefaultInterval is how long after a sync the next one is due: the sync
// interval package freshness allows a connection's data on top of its
// source's lag.
const DefaultInterval = freshness.SyncEvery

// Settings are a connection's choices that are not secret.
type Settings struct {
	// StartDate is the first day a new connection backfills (YYYY-MM-DD).
	StartDate string `json:"start_date,omitempty"`
	// RestateDays is how many days back every run pulls again.
	RestateDays int `json:"restate_days,omitempty"`
	// Data is DataCosts or DataUsage.
	Data string `json:"data,omitempty"`

	// Bucket, Prefix (the export's prefix and name) and Region of an AWS
	// export; EndpointURL points at an S3-compatible server instead.
	Bucket      string `json:"bucket,omitempty"`
	Prefix      string `json:"prefix,omitempty"`
	Region      string `json:"region,omitempty"`
	EndpointURL string `json:"endpoint_url,omitempty"`

	// Account and Container of an Azure export; Prefix is its storage
	// directory there, and EndpointURL the blob service's URL when it is
	// not https://ACCOUNT.blob.core.windows.net (Azurite, another cloud).
	Account   string `json:"account,omitempty"`
	Container string `json:"container,omitempty"`

	// Table is a GCP billing export's BigQuery table,
	// project.dataset.table.
	Table string `json:"table,omitempty"`
}

// Credentials are what a connection signs in with. They never print: as
// text, %v, %#v or a log attribute they are "[redacted]".
type Credentials struct {
	APIKey string `json:"api_key,omitempty"`
	// An AWS access key; none means the default credential chain (the
	// host's role, the environment), which only an install that allows the
	// host's credentials uses (policy.go).
	AccessKeyID     string `json:"access_key_id,omitempty"`
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	SessionToken    string `json:"session_token,omitempty"`
	// An Azure storage account's key, or a SAS token (the query string,
	// without "?").
	AccountKey string `json:"account_key,omitempty"`
	SASToken   string `json:"sas_token,omitempty"`
	// A GCP service account's key, the JSON Google's console downloads.
	ServiceAccountJSON string `json:"service_account_json,omitempty"`
}

func (Credentials) String() string             { return "[redacted]" }
func (Credentials) GoString() string           { return "[redacted]" }
func (Credentials) LogValue() slog.Value       { return slog.StringValue("[redacted]") }
func (Credentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("[redacted]")) }

// hint is what pages show of the credentials: enough to tell two keys
// apart, never enough to use.
func (c Credentials) hint() string {
	if c.AccessKeyID != "" {
		return c.AccessKeyID // not a secret: it names the key, as AWS's console shows it
	}
	k := c.APIKey
	switch {
	case c.ServiceAccountJSON != "":
		return gcpHint(c.ServiceAccountJSON)
	case c.SASToken != "":
		return "SAS token" + sasExpiry(c.SASToken)
	case c.AccountKey != "":
		k = c.AccountKey
	case c.APIKey == "":
		return "default credential chain"
	}
	if len(k) < 12 {
		return "…"
	}
	return "…" + k[len(k)-4:]
}

// State is what a connection remembers between runs.
type State struct {
	// SyncedThrough is the day the last successful pull reached (its
	// window's end, exclusive), YYYY-MM-DD.
	SyncedThrough string `json:"synced_through,omitempty"`
	// Periods is, per billing period of a bucket's export, the manifest
	// version imported ("ETag/assembly or execution id").
	Periods map[string]string `json:"periods,omitempty"`
	// BytesBilled is what BigQuery billed for the last pull's query (GCP).
	BytesBilled *int64 `json:"bytes_billed,omitempty"`
}

// InputError is a connection refused as typed: Field names the input.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

// InputErrors are all the *InputErrors in err, which may join several
// (errors.Join), in order.
func InputErrors(err error) []*InputError {
	if ie, ok := err.(*InputError); ok {
		return []*InputError{ie}
	}
	var out []*InputError
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, InputErrors(e)...)
		}
	case interface{ Unwrap() error }:
		out = InputErrors(u.Unwrap())
	}
	return out
}

// HTTPStatus is 422: the input, not the server, is at fault.
func (e *InputError) HTTPStatus() int { return http.StatusUnprocessableEntity }

// Input is a connection as typed in the form, the API's JSON or the CLI's
// flags.
type Input struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	APIKey    string `json:"api_key"`
	StartDate string `json:"start_date"`
	// RestateDays is a number as typed: it goes through package
	// quantity like every number from outside.
	RestateDays quantity.Text `json:"restate_days"`
	Data        string        `json:"data"`
	// AWS.
	Bucket          string `json:"bucket"`
	Prefix          string `json:"prefix"`
	Region          string `json:"region"`
	EndpointURL     string `json:"endpoint_url"`
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	// Azure. SASToken may be a token or a SAS URL of the container, which
	// then gives the account, endpoint and container too.
	Account    string `json:"account"`
	Container  string `json:"container"`
	AccountKey string `json:"account_key"`
	SASToken   string `json:"sas_token"`
	// GCP: the export's table, and the service account's key (its JSON,
	// as a string).
	Table              string `json:"table"`
	ServiceAccountJSON string `json:"service_account_json"`
}

// maxBackfill bounds how far back a start date may go.
const maxBackfill = 3 * 366 * 24 * time.Hour

// validate checks in and returns the settings and credentials to save.
func (in Input) validate(now time.Time) (Settings, Credentials, error) {
	name := label.Clean(in.Name)
	switch {
	case name == "":
		return Settings{}, Credentials{}, &InputError{"name", "give the connection a name"}
	case utf8.RuneCountInString(name) > 80:
		return Settings{}, Credentials{}, &InputError{"name", "at most 80 characters"}
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return Settings{}, Credentials{}, &InputError{"name", "letters, digits, spaces and punctuation only"}
	}
	k, ok := kindOf(in.Kind)
	if !ok {
		return Settings{}, Credentials{}, &InputError{"kind", fmt.Sprintf("%q: want one of %s", in.Kind, strings.Join(Kinds(), ", "))}
	}
	return k.validate(in, now)
}

// validateAdminAPI checks the fields of a connection to a provider's admin
// API (OpenAI, Anthropic): its admin key, what to pull, and from when.
func (in Input) validateAdminAPI(now time.Time) (Settings, Credentials, error) {
	var set Settings
	var cred Credentials
	cred.APIKey = strings.TrimSpace(in.APIKey)
	if cred.APIKey == "" {
		return set, cred, &InputError{"api_key", "paste the organization's admin API key"}
	}
	if len(cred.APIKey) > 512 || strings.ContainsFunc(cred.APIKey, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return set, cred, &InputError{"api_key", "an admin key is printable ASCII without spaces, at most 512 characters"}
	}
	set.Data = in.Data
	if set.Data == "" {
		set.Data = DataCosts
	}
	if set.Data != DataCosts && set.Data != DataUsage {
		return set, cred, &InputError{"data", `want "costs" (the bill) or "usage" (tokens, priced with the org's prices)`}
	}
	var err error
	if set.StartDate, set.RestateDays, err = in.schedule(now); err != nil {
		return set, cred, err
	}
	return set, cred, nil
}

// schedule checks the days a time-bucketed connection pulls: the first day
// it backfills (default: 30 days ago) and how many days back every run
// pulls again (default DefaultRestateDays).
func (in Input) schedule(now time.Time) (start string, restateDays int, err error) {
	restateDays = DefaultRestateDays
	if t := strings.TrimSpace(string(in.RestateDays)); t != "" {
		n, err := quantity.Count.Parse("restate_days", t)
		if err != nil {
			return "", 0, &InputError{"restate_days", strings.TrimPrefix(err.Error(), "restate_days: ")}
		}
		if n.LessThan(decimal.NewFromInt(1)) || n.GreaterThan(decimal.NewFromInt(31)) {
			return "", 0, &InputError{"restate_days", "between 1 and 31 days"}
		}
		restateDays = int(n.IntPart())
	}
	today := day(now)
	first := today.AddDate(0, 0, -30)
	if s := strings.TrimSpace(in.StartDate); s != "" {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return "", 0, &InputError{"start_date", fmt.Sprintf("%q is not a date: want YYYY-MM-DD", s)}
		}
		if d.After(today) || today.Sub(d) > maxBackfill {
			return "", 0, &InputError{"start_date", "between three years ago and today"}
		}
		first = d
	}
	return first.Format(time.DateOnly), restateDays, nil
}

var (
	bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+-\d$`)
	accessKey  = regexp.MustCompile(`^[A-Z0-9]{16,128}$`)
)

func (in Input) validateS3() (Settings, Credentials, error) {
	set := Settings{Bucket: strings.TrimSpace(in.Bucket), Prefix: strings.Trim(strings.TrimSpace(in.Prefix), "/"),
		Region: strings.TrimSpace(in.Region), EndpointURL: strings.TrimSpace(in.EndpointURL)}
	cred := Credentials{AccessKeyID: strings.TrimSpace(in.AccessKeyID), SecretAccessKey: strings.TrimSpace(in.SecretAccessKey)}
	switch {
	case !bucketName.MatchString(set.Bucket):
		return set, cred, &InputError{"bucket", "a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens"}
	case len(set.Prefix) > 1024 || !utf8.ValidString(set.Prefix) || strings.ContainsFunc(set.Prefix, unicode.IsControl):
		return set, cred, &InputError{"prefix", "the export's S3 prefix and name, such as billing/my-cur"}
	case set.Region != "" && !regionName.MatchString(set.Region):
		return set, cred, &InputError{"region", "an AWS region such as us-east-1"}
	case (cred.AccessKeyID == "") != (cred.SecretAccessKey == ""):
		return set, cred, &InputError{"secret_access_key", "give both the access key id and its secret"}
	case cred.AccessKeyID != "" && !accessKey.MatchString(cred.AccessKeyID):
		return set, cred, &InputError{"access_key_id", "an access key id is uppercase letters and digits (AKIA…)"}
	case len(cred.SecretAccessKey) > 256 || strings.ContainsFunc(cred.SecretAccessKey, func(r rune) bool { return r <= ' ' || r > '~' }):
		return set, cred, &InputError{"secret_access_key", "printable ASCII without spaces"}
	}
	if set.EndpointURL != "" {
		u, err := url.Parse(set.EndpointURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return set, cred, &InputError{"endpoint_url", "the S3-compatible server's base URL, such as https://minio.example.com:9000"}
		}
	}
	return set, cred, nil
}

// day is the UTC day t falls on, at midnight: the providers' daily
// buckets are UTC days.
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Service creates, tests and syncs connections for the web pages, the API,
// the CLI and the jobs alike.
type Service struct {
	// Store is the unfenced store: a sync fences itself to the
	// connection's org.
	Store    *store.Store
	Importer *ingest.Importer
	// Key seals credentials; nil when SECRET_KEY is not set, which refuses
	// new connections and fails syncs with seal.ErrNoKey.
	Key *seal.Key
	// HTTP makes the providers' calls; nil means a client whose calls each
	// time out after CallTimeout.
	HTTP *http.Client
	// Base URLs of the providers' APIs, for tests; empty means the real
	// ones. BigQueryURL and GoogleTokenURL serve GCP connections (the
	// BigQuery API, Google's OAuth token endpoint).
	OpenAIURL, AnthropicURL     string
	BigQueryURL, GoogleTokenURL string
	// Retry is how calls answered 429 or 5xx are retried; zero means
	// DefaultRetry.
	Retry Retry
	// Interval is how long after a sync the next is due; zero means
	// DefaultInterval.
	Interval time.Duration
	// Egress is where calls a tenant can aim may go (an S3 endpoint, an
	// Azure blob service and the SAS URL's host): the zero Policy reaches
	// public addresses only, checked when dialled, redirects included
	// (CONNECTIONS_ALLOW_PRIVATE; policy.go).
	Egress egress.Policy
	// AllowHostCredentials lets a connection without a key of its own
	// sign in as this server (the AWS default credential chain): for
	// single-tenant installs only (policy.go).
	AllowHostCredentials bool
	Log                  *slog.Logger
	// Now is the clock (time.Now when nil), for tests.
	Now func() time.Time
	// Notifier tells the org's admins when a connection starts failing or
	// stalls, and when it recovers (nil: nobody is told).
	Notifier *notify.Notifier
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) interval() time.Duration {
	if s.Interval > 0 {
		return s.Interval
	}
	return DefaultInterval
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Create validates in and saves it as a connection of org, its credentials
// sealed, due to sync at once. st is the caller's store (a request's,
// fenced to org). A name the org uses already is an *InputError.
func (s *Service) Create(ctx context.Context, st *store.Store, orgID, userID int64, in Input) (store.Connection, error) {
	set, cred, err := in.validate(s.now())
	if err != nil {
		return store.Connection{}, err
	}
	if err := s.checkCredentials(in.Kind, cred); err != nil {
		return store.Connection{}, err
	}
	if err := s.checkEndpoint(set); err != nil {
		return store.Connection{}, err
	}
	if s.Key == nil {
		return store.Connection{}, seal.ErrNoKey
	}
	settings, err := json.Marshal(set)
	if err != nil {
		return store.Connection{}, err
	}
	plain, err := json.Marshal(cred)
	if err != nil {
		return store.Connection{}, err
	}
	c, err := st.CreateConnection(ctx, store.NewConnection{
		OrgID: orgID, Name: label.Clean(in.Name), Kind: in.Kind, Settings: settings,
		Secret: s.Key.Seal(orgID, plain), SecretHint: cred.hint(), CreatedBy: userID,
	})
	if errors.Is(err, store.ErrConflict) {
		return c, &InputError{"name", fmt.Sprintf("the org has a connection named %q already", label.Clean(in.Name))}
	}
	return c, err
}

// credentials opens c's sealed credentials.
func (s *Service) credentials(c store.Connection) (Credentials, error) {
	if s.Key == nil {
		return Credentials{}, seal.ErrNoKey
	}
	plain, err := s.Key.Open(c.OrgID, c.Secret)
	if err != nil {
		return Credentials{}, err
	}
	var cred Credentials
	if err := json.Unmarshal(plain, &cred); err != nil {
		return Credentials{}, errors.New("the stored credentials are damaged: save the connection's key again")
	}
	return cred, nil
}

// Rotate re-seals every connection's credentials and every Slack and
// webhook URL under newKey, in one transaction: all or none. Secrets
// already under newKey are left alone, so a rotation that was interrupted
// can be run again; channel URLs still in clear are sealed too.
func Rotate(ctx context.Context, st *store.Store, oldKey, newKey *seal.Key) (conns, channels int, err error) {
	err = st.InTx(ctx, func(tx *store.Store) error {
		cs, err := tx.AllConnections(ctx)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if strings.HasPrefix(c.Secret, "v1."+newKey.ID()+".") {
				continue
			}
			plain, err := oldKey.Open(c.OrgID, c.Secret)
			if err != nil {
				return fmt.Errorf("connection %q (org %d): %w", c.Name, c.OrgID, err)
			}
			if err := tx.SetConnectionSecret(ctx, c.OrgID, c.ID, newKey.Seal(c.OrgID, plain)); err != nil {
				return err
			}
			conns++
		}
		channels, err = sealChannels(ctx, tx, oldKey, newKey)
		return err
	})
	return conns, channels, err
}

// SealChannels seals, under key, every Slack and webhook URL still stored
// in clear (saved before URLs were sealed, or while the server had no
// SECRET_KEY), in one transaction. Servers run it at start-up; it is a
// no-op once every URL is sealed. See docs/notifications.md.
func SealChannels(ctx context.Context, st *store.Store, key *seal.Key) (int, error) {
	n := 0
	err := st.InTx(ctx, func(tx *store.Store) error {
		var err error
		n, err = sealChannels(ctx, tx, nil, key)
		return err
	})
	return n, err
}

// sealChannels seals clear channel URLs under newKey, and re-seals those
// under oldKey (nil: none are).
func sealChannels(ctx context.Context, tx *store.Store, oldKey, newKey *seal.Key) (int, error) {
	chs, err := tx.AllNotificationChannels(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ch := range chs {
		url := ch.URL
		if seal.IsSealed(url) {
			if strings.HasPrefix(url, "v1."+newKey.ID()+".") || oldKey == nil {
				continue
			}
			if url, err = oldKey.OpenChannel(ch.OrgID, ch.URL); err != nil {
				return n, fmt.Errorf("%s channel %d (org %d): %w", ch.Kind, ch.ID, ch.OrgID, err)
			}
		}
		if err := tx.SealChannelURL(ctx, ch.OrgID, ch.ID, ch.URL, newKey.SealChannel(ch.OrgID, url)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// View is a connection as the API and `burnrate connection list --json`
// show it: everything but the credentials, of which only the hint.
type View struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Kind       string     `json:"kind"`
	Settings   Settings   `json:"settings"`
	SecretHint string     `json:"secret_hint"`
	Paused     bool       `json:"paused"`
	CreatedAt  time.Time  `json:"created_at"`
	NextRunAt  *time.Time `json:"next_run_at"` // null while paused
	LastRunAt  *time.Time `json:"last_run_at"`
	LastStatus string     `json:"last_status"` // "", ok, failed
	LastError  string     `json:"last_error"`
	LastRows   int64      `json:"last_rows"`
	// LastFix is what a person should do about LastError; FailingSince
	// and Failures describe the current streak of failed runs.
	LastFix      string     `json:"last_fix,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	Failures     int        `json:"failures"`
	// LastBytesBilled is what BigQuery billed for the last pull (GCP);
	// absent for other kinds and before the first pull.
	LastBytesBilled *int64 `json:"last_bytes_billed,omitempty"`
}

// ViewOf returns c's view.
func ViewOf(c store.Connection) View {
	v := View{ID: c.ID, Name: c.Name, Kind: c.Kind, SecretHint: c.SecretHint, Paused: c.Paused, CreatedAt: c.CreatedAt,
		LastRunAt: c.LastRunAt, LastStatus: c.LastStatus, LastError: c.LastError, LastRows: c.LastRows,
		LastFix: c.LastFix, FailingSince: c.FailingSince, Failures: c.Failures}
	_ = json.Unmarshal(c.Settings, &v.Settings)
	var st State
	if json.Unmarshal(c.State, &st) == nil {
		v.LastBytesBilled = st.BytesBilled
	}
	if !c.Paused {
		next := c.NextRunAt
		v.NextRunAt = &next
	}
	return v
}
