package views

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// PriceInfo says which prices a result used, for the line under every
// advisor and break-even result.
type PriceInfo struct {
	Source        string // catalog, overrides or paid
	CatalogSource string // the GPU catalog's description, with override labels
	CatalogAsOf   string
	LLMSource     string
	LLMAsOf       string
	GPUOverrides  int
	LLMOverrides  int
	PaidRates     int    // effective rates found in bills (any currency)
	PaidUsed      int    // USD rates used as prices
	PaidWindow    string // "2026-05-01 to 2026-07-30"
}

// PriceSourceOption is one choice of the price-source radio group.
type PriceSourceOption struct{ Value, Label string }

// PriceSourceOptions are the price sources, in display order.
var PriceSourceOptions = []PriceSourceOption{
	{advisor.PriceCatalog, "Shipped catalog"},
	{advisor.PriceOverrides, "Catalog + your negotiated prices"},
	{advisor.PricePaid, "What you actually paid (from your bills), then your negotiated prices"},
}

// AssumptionField is one editable constant of the advisor's model; Key is
// its JSON (and form) name in pricing.Assumptions.
type AssumptionField struct {
	Key, Label, Help string
}

// AssumptionFields lists every field of pricing.Assumptions the form edits.
var AssumptionFields = []AssumptionField{
	{"mfu", "Matmul fraction", "share of peak training matmuls reach (0: calibrated per GPU generation)"},
	{"attention_efficiency", "Attention efficiency", "attention FLOPs' rate relative to the matmuls'"},
	{"global_batch_tokens", "Global batch (tokens)", "tokens per optimizer step across all GPUs"},
	{"step_overhead_s", "Step overhead (s)", "per optimizer step: update, sync, logging"},
	{"gpu_failures_per_hour", "GPU failures / GPU-hour", "hardware failures that restart the job (Llama 3: 1.97e-5)"},
	{"inference_mfu", "Inference MFU", "compute-bound inference: prefill and large-batch decode"},
	{"memory_fraction", "Memory fraction", "share of each GPU's memory to plan on"},
	{"runtime_reserve_gb", "Runtime reserve (GB)", "per GPU: CUDA context and engine"},
	{"eta", "η (bandwidth efficiency)", "achievable fraction of memory bandwidth in decode"},
	{"training_flops_factor", "Training FLOPs / (N·D)", "6: 2 forward + 4 backward"},
	{"lora_flops_factor", "LoRA FLOPs / (N·D)", "4: no weight gradients for the frozen base"},
	{"training_bytes_per_param", "Training bytes / param", "mixed-precision AdamW: 2 + 2 + 12"},
	{"qlora_bytes_per_param", "QLoRA bytes / param", "4-bit NF4 base with double-quantised constants (4.127 bits)"},
	{"adapter_fraction", "LoRA adapter fraction", "trainable params / base params (0: from the rank)"},
	{"lora_rank", "LoRA rank", "adapters on every attention and MLP projection"},
	{"micro_batch", "Micro-batch", "sequences per GPU whose activations are held"},
	{"inference_memory_overhead", "Inference memory overhead", "× weight bytes for runtime buffers"},
	{"slow_interconnect_mfu_factor", "MFU factor without NVLink", "multi-GPU training over PCIe"},
	{"spot_interruptions_per_hour", "Spot λ (interruptions / h)", "expected preemptions per instance-hour"},
	{"restart_hours", "Restart (h)", "time to replace and reload after a preemption"},
	{"checkpoint_interval_hours", "Checkpoint interval (h)", "half an interval is lost per preemption"},
	{"checkpoint_write_hours", "Checkpoint write (h)", "time one checkpoint write stalls the job"},
	{"serving_hours", "Serving period (h)", "hours a serving deployment is priced over"},
}

// ModelOptions are the known open models for the model selects.
func ModelOptions() []pricing.Model { return pricing.Models() }

// GPUOptions are the GPU types of the shipped catalog.
func GPUOptions() []string {
	var out []string
	for _, g := range pricing.DefaultCatalog().GPUs() {
		out = append(out, g.Name)
	}
	return out
}

// ProviderOptions are the providers of the shipped catalog, sorted.
func ProviderOptions() []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range pricing.DefaultCatalog().Instances() {
		if !seen[in.Provider] {
			seen[in.Provider] = true
			out = append(out, in.Provider)
		}
	}
	sort.Strings(out)
	return out
}

// Precisions are the weight precisions, in display order.
var Precisions = []string{"bf16", "fp16", "fp8", "int8", "int4", "fp32"}

func jobLabel(j pricing.JobType) string {
	switch j {
	case pricing.JobTraining:
		return "Pre-training"
	case pricing.JobFullFinetune:
		return "Full fine-tune"
	case pricing.JobLoRA:
		return "LoRA fine-tune"
	case pricing.JobQLoRA:
		return "QLoRA fine-tune"
	case pricing.JobBatchInference:
		return "Batch inference"
	case pricing.JobServing:
		return "Online serving"
	}
	return string(j)
}

func has(v url.Values, key, val string) bool {
	for _, x := range v[key] {
		if x == val {
			return true
		}
	}
	return false
}

func checked(v url.Values, key string) bool { return v.Get(key) != "" }

// usd writes a price of the catalogs, which are all in US dollars, as
// every page writes money (quantity.FormatMoney): 1,234.50 USD, and
// 0.0025 USD for a token's price.
func usd(d decimal.Decimal) string { return quantity.FormatMoney(d, "USD") }

func usdPtr(d *decimal.Decimal) string {
	if d == nil {
		return "—"
	}
	return usd(*d)
}

func num(f float64) string {
	switch {
	case f == 0:
		return "0"
	case math.Abs(f) >= 100:
		return quantity.Group(strconv.FormatFloat(math.Round(f), 'f', 0, 64))
	case math.Abs(f) >= 10:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

func intStr(n int) string { return strconv.Itoa(n) }

// tokens formats a token count as 3.1B, 310M, 12k.
func tokens(v float64) string { return pricing.HumanCount(v) }

func tokens64(n int64) string { return tokens(float64(n)) }

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

func idPath(prefix string, id int64, suffix string) templ.SafeURL {
	return templ.SafeURL(prefix + strconv.FormatInt(id, 10) + suffix)
}

func billed(m map[string]decimal.Decimal) string {
	cur := make([]string, 0, len(m))
	for c := range m {
		cur = append(cur, c)
	}
	sort.Strings(cur)
	var parts []string
	for _, c := range cur {
		parts = append(parts, quantity.FormatMoney(m[c], c))
	}
	return strings.Join(parts, ", ")
}

// UsageTotals sums usage rows.
func UsageTotals(us []store.LLMUsage) store.LLMUsage {
	t := store.LLMUsage{Model: "all models", Billed: map[string]decimal.Decimal{}}
	for _, u := range us {
		t.InputTokens += u.InputTokens
		t.OutputTokens += u.OutputTokens
		t.CachedTokens += u.CachedTokens
		t.Requests += u.Requests
		for c, v := range u.Billed {
			t.Billed[c] = t.Billed[c].Add(v)
		}
	}
	return t
}

func tokensExact(n int64) string { return strconv.FormatInt(n, 10) }

func decStr(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.String()
}
