package ingest

import (
	"maps"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/pricing"
)

// Source names a supported input format. The values are stored in
// charges.source and accepted by --source / ?source=.
type Source string

// Supported sources.
const (
	SourceAWSCUR         Source = "aws-cur"
	SourceAWSCUR2        Source = "aws-cur2"
	SourceGCPBilling     Source = "gcp-billing"
	SourceAzureCost      Source = "azure-cost"
	SourceFOCUS          Source = "focus"
	SourceOCICost        Source = "oci-cost"
	SourceOCIFocus       Source = "oci-focus"
	SourceOpenAIUsage    Source = "openai-usage"
	SourceOpenAICosts    Source = "openai-costs"
	SourceAnthropicUsage Source = "anthropic-usage"
	SourceAnthropicCost  Source = "anthropic-cost"
	SourceConsoleCost    Source = "anthropic-console-cost"
	SourceConsoleUsage   Source = "anthropic-console-usage"
	SourceLiteLLMSpend   Source = "litellm-spend"
	SourceLiteLLMDaily   Source = "litellm-daily"
	SourceOpenRouter     Source = "openrouter-activity"
	SourceGCPBigQuery    Source = "gcp-bigquery"
	SourceGeneric        Source = "generic"
	defaultTeamTagKey           = "team"
)

// Sources lists every supported source in detection order, then the two
// that are never detected, only chosen: gcp-bigquery (what a GCP
// connection pulls) and generic (by passing a Mapping).
func Sources() []Source {
	out := make([]Source, 0, len(detectors)+2)
	for _, d := range detectors {
		out = append(out, d.source)
	}
	return append(out, SourceGCPBigQuery, SourceGeneric)
}

// SourceNames lists the sources' names, for forms and usage texts.
func SourceNames() []string {
	var out []string
	for _, s := range Sources() {
		out = append(out, string(s))
	}
	return out
}

// ChargeCategory is the FOCUS ChargeCategory of a row.
type ChargeCategory string

// FOCUS charge categories.
const (
	ChargeUsage      ChargeCategory = "Usage"
	ChargePurchase   ChargeCategory = "Purchase"
	ChargeTax        ChargeCategory = "Tax"
	ChargeCredit     ChargeCategory = "Credit"
	ChargeAdjustment ChargeCategory = "Adjustment"
)

// Row is one normalised charge (FOCUS 1.x names plus x_ extensions; docs/data-model.md).
//
// String fields may share memory with the CSV record they came from; they
// stay valid after the next call to Next. Tags is owned by the Reader and is
// overwritten by the next call to Next: use Clone to keep a row.
type Row struct {
	Source Source
	// ProviderName and ServiceName are canonical (CanonicalProvider,
	// CanonicalService); ProviderRaw and ServiceRaw keep what the file
	// wrote when it differs, and are empty otherwise.
	ProviderName    string
	ServiceName     string
	ProviderRaw     string `json:",omitempty"`
	ServiceRaw      string `json:",omitempty"`
	ServiceCategory string
	SKU             string // usage type / meter / model
	ResourceID      string
	RegionID        string
	SubAccountID    string // account / project / subscription / workspace
	ChargeCategory  ChargeCategory

	// ChargePeriodStart is inclusive, ChargePeriodEnd exclusive; both UTC.
	// Event rows (one request) have End == Start.
	ChargePeriodStart time.Time
	ChargePeriodEnd   time.Time

	BilledCost       decimal.Decimal // cash / invoice basis; credits are negative
	EffectiveCost    decimal.Decimal // amortised
	ListCost         decimal.Decimal // public on-demand
	BillingCurrency  string          // ISO 4217, upper case
	ConsumedQuantity decimal.Decimal
	ConsumedUnit     string

	Tags map[string]string // nil when the row has none
	Team string            // value of the org's team tag key ("" if absent)

	InstanceType string          // the VM / instance type, when the row is for one
	GPUType      string          // e.g. "A100", "H100"; "" for non-GPU rows
	GPUCount     decimal.Decimal // GPUs per instance (may be fractional)
	GPUHours     decimal.Decimal // usage hours × GPUCount, compute-hour rows only

	Model        string
	InputTokens  int64 // all input tokens, including cached reads and cache writes
	OutputTokens int64
	CachedTokens int64 // cached input reads (a subset of InputTokens)
	Requests     int64
	PricedByUs   bool // cost computed from the LLM price table, not read from the file

	// BillingAccountID and BillingPeriodStart identify the slice of data a
	// cloud export restates: a newer export of the same (Source,
	// BillingAccountID, BillingPeriodStart) replaces the older rows.
	BillingAccountID   string
	BillingPeriodStart time.Time

	// DedupeKey identifies a row across overlapping uploads of event logs
	// (request/generation id) and aggregated usage buckets
	// (bucket|project|model|…). Empty for period-replaced cloud exports.
	DedupeKey string
}

// Clone returns a copy of r that does not share its Tags map with the Reader.
func (r *Row) Clone() Row {
	c := *r
	if r.Tags != nil {
		c.Tags = maps.Clone(r.Tags)
	}
	return c
}

// LLMPricer prices LLM token usage for sources whose exports carry no cost.
// The pricing package implements it (PriceTable); ingest only declares the
// seam.
type LLMPricer interface {
	// PriceUsage returns the cost in USD of u's tokens of model, each kind
	// at its own rate (pricing.LLMPrice.UsageCost), and false when the
	// model has no price.
	PriceUsage(model string, u pricing.TokenUsage) (cost decimal.Decimal, ok bool)
}

// GPUMapper maps a cloud instance / VM type to its GPUs.
type GPUMapper interface {
	// InstanceGPU returns the GPU type and count of instanceType at provider
	// ("aws", "gcp", "azure"), and false for non-GPU or unknown types.
	InstanceGPU(provider, instanceType string) (gpu string, count float64, ok bool)
}

// Mapping is a saved column mapping for the generic source. Every field but
// Date and Cost is optional. Column names are matched case-insensitively.
type Mapping struct {
	Date     string // column holding the charge date or timestamp
	Cost     string // column holding the billed cost
	Currency string // column holding the currency code
	Service  string
	Account  string
	// Provider is a column name; when the header has no such column the
	// value itself is used as the provider name for every row.
	Provider string
	Tags     []string // columns copied into Tags under their header name
	// DateFormat is a Go time layout ("02.01.2006"); empty = auto-detect.
	// The mapping page offers the layouts of DateFormats by example.
	DateFormat string
	// DefaultCurrency is used when Currency is empty or the cell is blank.
	DefaultCurrency string
	// DecimalSeparator is "," when the file writes amounts as 1.234,56;
	// "" or "." for 1,234.56. Costs may carry a currency symbol or code
	// and parentheses for negatives either way.
	DecimalSeparator string
}

// Options configure Open. The zero value detects the source and uses the
// "team" tag key; sources without costs need Pricer.
type Options struct {
	// FileName is used in error messages only.
	FileName string
	// Source forces a source instead of detecting it from the header.
	Source Source
	// TeamTagKey is the tag/label/cost-category key whose value becomes
	// Row.Team (matched case-insensitively). Default "team".
	TeamTagKey string
	// Pricer prices token usage for openai-usage and anthropic-usage.
	Pricer LLMPricer
	// GPUs maps instance types to GPUs; nil leaves GPU fields empty except
	// where the export names the GPU itself (GCP accelerator SKUs).
	GPUs GPUMapper
	// Mapping configures the generic source; setting it with Source empty
	// selects generic.
	Mapping *Mapping
	// Now is the clock that dates in the file are checked against (none may
	// be more than a year after now); nil means time.Now.
	Now func() time.Time
	// MaxRecordBytes bounds one CSV record (a runaway quoted field reads the
	// rest of the file into memory otherwise). Default 8 MiB; the check is
	// approximate (to the read buffer) and never below 128 KiB.
	MaxRecordBytes int
}
