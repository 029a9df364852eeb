package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestConfigTrustedProxies(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(nil))
	if err != nil || cfg.TrustedProxies != nil {
		t.Fatalf("default TRUSTED_PROXIES = %v, %v; want none", cfg.TrustedProxies, err)
	}
	cfg, err = loadConfig(env(map[string]string{"TRUSTED_PROXIES": " 10.1.2.3/8, 2001:db8::/32,192.0.2.7 "}))
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("192.0.2.7/32")}
	if !slices.Equal(cfg.TrustedProxies, want) {
		t.Fatalf("TRUSTED_PROXIES = %v, want %v", cfg.TrustedProxies, want)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.internal", "0.0.0.0/0", "::/0", "10.0.0.0/8;192.168.0.0/16"} {
		if _, err := loadConfig(env(map[string]string{"TRUSTED_PROXIES": bad})); err == nil || !strings.Contains(err.Error(), "TRUSTED_PROXIES") {
			t.Errorf("TRUSTED_PROXIES=%q: err = %v, want a TRUSTED_PROXIES error", bad, err)
		}
	}
}

func TestConfigMetrics(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(map[string]string{"METRICS_TOKEN": "0123456789abcdef0123", "METRICS_ADDR": "127.0.0.1:9090"}))
	if err != nil || cfg.MetricsToken != "0123456789abcdef0123" || cfg.MetricsAddr != "127.0.0.1:9090" {
		t.Fatalf("metrics config = %q %q, %v", cfg.MetricsToken, cfg.MetricsAddr, err)
	}
	for _, bad := range []map[string]string{
		{"METRICS_TOKEN": "short"},
		{"METRICS_TOKEN": "has a space in it, long enough"},
		{"METRICS_ADDR": "9090"},
		{"METRICS_ADDR": ":8080"},
	} {
		if _, err := loadConfig(env(bad)); err == nil || !strings.Contains(err.Error(), "METRICS_") {
			t.Errorf("%v: err = %v, want a METRICS_ error", bad, err)
		}
	}
}

func TestConfigWebhookAllowPrivate(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(nil))
	if err != nil || cfg.WebhookAllowPrivate {
		t.Fatalf("default WEBHOOK_ALLOW_PRIVATE = %v, %v; want off", cfg.WebhookAllowPrivate, err)
	}
	cfg, err = loadConfig(env(map[string]string{"WEBHOOK_ALLOW_PRIVATE": "1"}))
	if err != nil || !cfg.WebhookAllowPrivate {
		t.Fatalf("WEBHOOK_ALLOW_PRIVATE=1: %v, %v", cfg.WebhookAllowPrivate, err)
	}
	if _, err := loadConfig(env(map[string]string{"WEBHOOK_ALLOW_PRIVATE": "yes"})); err == nil || !strings.Contains(err.Error(), "WEBHOOK_ALLOW_PRIVATE") {
		t.Fatalf("WEBHOOK_ALLOW_PRIVATE=yes: %v", err)
	}
}

// TestConfigConnectionsAllowHostCredentials: off unless the operator says
// so.
func TestConfigConnectionsAllowHostCredentials(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(nil))
	if err != nil || cfg.ConnectionsAllowHostCredentials {
		t.Fatalf("default CONNECTIONS_ALLOW_HOST_CREDENTIALS = %v, %v; want off", cfg.ConnectionsAllowHostCredentials, err)
	}
	cfg, err = loadConfig(env(map[string]string{"CONNECTIONS_ALLOW_HOST_CREDENTIALS": "1"}))
	if err != nil || !cfg.ConnectionsAllowHostCredentials {
		t.Fatalf("CONNECTIONS_ALLOW_HOST_CREDENTIALS=1: %v, %v", cfg.ConnectionsAllowHostCredentials, err)
	}
}

// TestConfigConnectionsAllowPrivate: public addresses only unless the
// operator lists hosts or ranges; a bad entry is named.
func TestConfigConnectionsAllowPrivate(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(nil))
	if err != nil || cfg.ConnectionsEgress.String() != "public addresses only" {
		t.Fatalf("default CONNECTIONS_ALLOW_PRIVATE = %s, %v", cfg.ConnectionsEgress, err)
	}
	cfg, err = loadConfig(env(map[string]string{"CONNECTIONS_ALLOW_PRIVATE": "minio.internal,10.20.0.0/16"}))
	if err != nil || cfg.ConnectionsEgress.String() != "public addresses and minio.internal, 10.20.0.0/16" {
		t.Fatalf("CONNECTIONS_ALLOW_PRIVATE: %s, %v", cfg.ConnectionsEgress, err)
	}
	if _, err := loadConfig(env(map[string]string{"CONNECTIONS_ALLOW_PRIVATE": "10.0.0.0/99"})); err == nil || !strings.Contains(err.Error(), `CONNECTIONS_ALLOW_PRIVATE: "10.0.0.0/99" is not a CIDR range`) {
		t.Fatalf("bad range: %v", err)
	}
}

func TestConfigImportTimeout(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(nil))
	if err != nil || cfg.ImportTimeout != 30*time.Minute {
		t.Fatalf("default IMPORT_TIMEOUT = %s, %v", cfg.ImportTimeout, err)
	}
	if cfg, err = loadConfig(env(map[string]string{"IMPORT_TIMEOUT": "2h"})); err != nil || cfg.ImportTimeout != 2*time.Hour {
		t.Fatalf("IMPORT_TIMEOUT=2h: %s, %v", cfg.ImportTimeout, err)
	}
	for _, bad := range []string{"0", "10ms", "soon"} {
		if _, err := loadConfig(env(map[string]string{"IMPORT_TIMEOUT": bad})); err == nil || !strings.Contains(err.Error(), "IMPORT_TIMEOUT") {
			t.Errorf("IMPORT_TIMEOUT=%s: %v", bad, err)
		}
	}
}

func TestConfigMail(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(nil))
	if err != nil || cfg.SMTPURL != "" || cfg.MailFrom != "Burnrate <burnrate@localhost>" {
		t.Fatalf("mail defaults = %q %q, %v", cfg.SMTPURL, cfg.MailFrom, err)
	}
	cfg, err = loadConfig(env(map[string]string{"SMTP_URL": "smtps://u:s3cret@smtp.example.com", "MAIL_FROM": "Burnrate <costs@example.com>"}))
	if err != nil || cfg.MailFrom != "Burnrate <costs@example.com>" {
		t.Fatalf("mail config = %q, %v", cfg.MailFrom, err)
	}
	for _, bad := range []map[string]string{
		{"SMTP_URL": "http://u:s3cret@smtp.example.com"},
		{"SMTP_URL": "smtp://u:s3cret@smtp.example.com:70000"},
		{"MAIL_FROM": "costs at example dot com"},
	} {
		_, err := loadConfig(env(bad))
		key := "SMTP_URL"
		if _, ok := bad["MAIL_FROM"]; ok {
			key = "MAIL_FROM"
		}
		if err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("%v: err = %v, want a %s error", bad, err, key)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: the error shows the password: %v", bad, err)
		}
	}
}

// TestListenURL checks the URL printed for an ADDR: the one the server
// really listens on.
func TestListenURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8080": "http://localhost:8080", "127.0.0.1:9000": "http://127.0.0.1:9000", "[::1]:9001": "http://[::1]:9001",
		"0.0.0.0:9002": "http://localhost:9002", "[::]:9003": "http://localhost:9003", "burnrate.internal:80": "http://burnrate.internal:80",
	} {
		if got := listenURL(addr); got != want {
			t.Errorf("listenURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
