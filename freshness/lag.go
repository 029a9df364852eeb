// Package freshness says how fresh an org's numbers are: for each source
// of its spend (a format, a provider, a connection), how far its data
// reaches ("data through": the newest charge period it has delivered),
// how late that is against the lag its kind normally has, and so what the
// numbers built on it may claim. The dashboard's headline, every budget's
// forecast, the spend API, the digest and the connection notices all ask
// it, so that one rule decides everywhere. See docs/data-model.md,
// "Freshness".
//
// lag.go is the table of expected lags; freshness.go reads an org's
// sources and judges them; health.go judges a connection.
package freshness

import "time"

// SyncEvery is how often a connection pulls (connect.DefaultInterval): a
// connection's data can be that much older than its source's lag before
// it is late.
const SyncEvery = 6 * time.Hour

// Kind is a kind of source: its format (an ingest.Source, as
// charges.source stores it), its name for people, how long after a charge
// period ends it normally has it, and why.
type Kind struct {
	Source string
	Name   string
	Lag    time.Duration
	Why    string
}

// Kinds is the table of expected lags, one row per import format
// (docs/data-model.md, "Freshness", prints it). A source whose newest data
// is older than its lag is late.
var Kinds = []Kind{
	{"aws-cur", "AWS CUR", 36 * time.Hour,
		"AWS refreshes the Cost and Usage Report up to three times a day; a day's usage is complete about a day after it ends"},
	{"aws-cur2", "AWS CUR 2.0", 36 * time.Hour, "as the CUR: refreshed a few times a day, complete about a day later"},
	{"focus", "FOCUS export", 36 * time.Hour, "cloud FOCUS exports (AWS, Google Cloud, Azure) are written daily, about a day behind"},
	{"gcp-billing", "Google Cloud billing export", 36 * time.Hour,
		"Cloud Billing writes to BigQuery through the day; most of a day's cost is there within a day"},
	{"azure-cost", "Azure cost export", 48 * time.Hour,
		"Azure's cost data arrives 8 to 24 hours late, and scheduled exports run once a day"},
	{"oci-cost", "Oracle Cloud cost report", 36 * time.Hour, "OCI writes cost reports every few hours, a day's complete within a day"},
	{"oci-focus", "Oracle Cloud FOCUS report", 36 * time.Hour, "as OCI's cost reports"},
	{"openai-costs", "OpenAI costs", 12 * time.Hour, "the costs report fills each day's bucket within a few hours"},
	{"openai-usage", "OpenAI usage", 6 * time.Hour, "the usage report's buckets fill within minutes to hours"},
	{"anthropic-cost", "Anthropic cost report", 12 * time.Hour, "the cost report fills each day's bucket within a few hours"},
	{"anthropic-usage", "Anthropic usage", 6 * time.Hour, "the usage report's buckets fill within minutes to hours"},
	{"anthropic-console-cost", "Claude Console cost download", 24 * time.Hour, "downloaded from the Console and uploaded about once a day"},
	{"anthropic-console-usage", "Claude Console usage download", 24 * time.Hour, "downloaded from the Console and uploaded about once a day"},
	{"gcp-bigquery", "Google Cloud billing export (BigQuery)", 36 * time.Hour,
		"Cloud Billing writes to BigQuery through the day; most of a day's cost is there within a day"},
	{"litellm-spend", "LiteLLM spend logs", 24 * time.Hour, "request logs, exported and uploaded about once a day"},
	{"litellm-daily", "LiteLLM daily spend", 24 * time.Hour, "a daily export, uploaded about once a day"},
	{"openrouter-activity", "OpenRouter activity", 24 * time.Hour, "an activity export, uploaded about once a day"},
	{"generic", "CSV (column mapping)", 48 * time.Hour, "a file in the org's own layout, uploaded by hand"},
}

// DefaultLag is the lag of a format not in Kinds.
const DefaultLag = 48 * time.Hour

// KindOf is source's row of Kinds; an unknown format gets its own name and
// DefaultLag.
func KindOf(source string) Kind {
	for _, k := range Kinds {
		if k.Source == source {
			return k
		}
	}
	return Kind{Source: source, Name: source, Lag: DefaultLag, Why: "a format without a known schedule"}
}

// connectionSources are the format each kind of connection delivers when
// it has delivered nothing yet (its settings may pick another: usage
// rather than costs).
var connectionSources = map[string]string{
	"openai":       "openai-costs",
	"anthropic":    "anthropic-cost",
	"aws-s3":       "aws-cur2",
	"azure-blob":   "azure-cost",
	"gcp-bigquery": "gcp-bigquery",
}

// ConnectionLag is how late the data of a connection of kind may normally
// be: its format's lag and a sync interval. sources are the formats it has
// delivered (the slowest counts); none: its kind's usual format.
func ConnectionLag(kind string, sources []string) time.Duration {
	if len(sources) == 0 {
		if s, ok := connectionSources[kind]; ok {
			sources = []string{s}
		}
	}
	lag := time.Duration(0)
	for _, s := range sources {
		lag = max(lag, KindOf(s).Lag)
	}
	if lag == 0 {
		lag = DefaultLag
	}
	return lag + SyncEvery
}

// KnowsConnection reports whether kind has a usual format in this table:
// connect's test keeps every kind of connection known.
func KnowsConnection(kind string) bool {
	_, ok := connectionSources[kind]
	return ok
}
