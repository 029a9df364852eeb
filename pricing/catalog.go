package pricing

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

//go:embed data/gpu_specs.csv
var gpuSpecsCSV []byte

//go:embed data/gpu_prices.csv
var gpuPricesCSV []byte

// Provenance of the embedded GPU tables, shown next to advice in the UI.
const (
	// GPUSpecsSource names where the embedded GPU specifications come from.
	GPUSpecsSource = "NVIDIA/AMD datasheet values as reproduced in public repositories (cli99/llm-analysis, hahnyuan/LLM-Viewer, Lightning throughput table)"
	// GPUPricesSource names where the embedded instance prices come from; each Instance.Source names the exact file and commit.
	GPUPricesSource = "SkyPilot catalogs (skypilot-org/skypilot-catalog v7/v8) and the SkyPilot-format mirror anycloud-sh/catalog@62ff0a98; cheapest region per instance type"
	// GPUPricesAsOf is the date of the newest catalog snapshot in the embedded prices (anycloud-sh/catalog@62ff0a98).
	GPUPricesAsOf = "2026-05-20"
)

// Instance is one rentable machine shape: a provider's instance type with its GPUs and hourly prices.
// Prices are per instance (not per GPU), in USD per hour.
type Instance struct {
	// Provider is the lower-case provider name: aws, gcp, azure, lambda, runpod, nebius, oci, vast, or any name an override uses.
	Provider string `json:"provider"`
	// Region is where the price was observed (the cheapest region of the catalog).
	Region string `json:"region"`
	// InstanceType is the provider's machine type name, e.g. "p5.48xlarge".
	InstanceType string `json:"instance_type"`
	// GPU is the canonical GPU name when NormalizeGPU knows it, otherwise the provider's spelling.
	GPU string `json:"gpu"`
	// GPUCount is the number of GPUs; fractional (e.g. 0.333) for Azure NV*_A10_v5 GPU slices.
	GPUCount float64 `json:"gpu_count"`
	// VCPUs is the number of virtual CPUs (0 when unknown).
	VCPUs float64 `json:"vcpus"`
	// MemoryGiB is host memory in GiB (0 when unknown).
	MemoryGiB float64 `json:"memory_gib"`
	// OnDemand is the on-demand price per instance-hour; nil when the provider sells none (e.g. AWS p5e, capacity blocks only).
	OnDemand *decimal.Decimal `json:"price_on_demand_usd_hr"`
	// Spot is the spot/preemptible price per instance-hour; nil when none is quoted or it gives no discount.
	Spot *decimal.Decimal `json:"price_spot_usd_hr"`
	// Source names where the row's prices come from (catalog file and commit, or the override's label).
	Source string `json:"source"`
	// Flags are human-readable data-quality notes ("spot price equals on-demand …").
	Flags []string `json:"flags,omitempty"`
	// Suspicious marks prices that should not be trusted without checking; the advisor skips such rows
	// unless AdviceRequest.IncludeSuspicious is set (and then says so in the option's reason).
	Suspicious bool `json:"suspicious"`
	// Override is true for rows that came from WithPrices (negotiated or effective rates).
	Override bool `json:"override"`
}

// Fractional reports whether the instance offers a slice of a GPU or a non-integer count;
// the advisor does not use such rows.
func (in Instance) Fractional() bool {
	return in.GPUCount < 1 || in.GPUCount != math.Trunc(in.GPUCount)
}

// Catalog is an immutable set of GPU specifications and instance prices. The zero value is not
// usable; get one from DefaultCatalog, NewCatalog or (*Catalog).WithPrices. Safe for concurrent use.
type Catalog struct {
	// Source describes where the prices come from (an override label is appended by WithPrices).
	Source string `json:"source"`
	// AsOf is the date of the price data (YYYY-MM-DD), as far as it is known.
	AsOf string `json:"as_of"`
	// SpecsSource describes where the GPU specifications come from.
	SpecsSource string `json:"specs_source"`

	gpus      map[string]GPU
	instances []Instance
	byKey     map[string]int // instanceKey → index in instances
}

var defaultCatalog = sync.OnceValues(func() (*Catalog, error) {
	return NewCatalog(bytes.NewReader(gpuSpecsCSV), bytes.NewReader(gpuPricesCSV), GPUPricesSource, GPUPricesAsOf)
})

// DefaultCatalog returns the catalog embedded in the binary, parsed on first use and shared
// afterwards. It panics only if the embedded data is corrupt, which the package tests rule out.
func DefaultCatalog() *Catalog {
	c, err := defaultCatalog()
	if err != nil {
		panic("pricing: embedded GPU catalog is corrupt: " + err.Error())
	}
	return c
}

// NewCatalog parses a gpu_specs.csv-shaped and a gpu_prices.csv-shaped table into a Catalog and
// applies the data-quality rules of docs/advisor.md, "Instance prices" (see annotate). Errors name line and column.
func NewCatalog(specs, prices io.Reader, source, asOf string) (*Catalog, error) {
	gpus, err := ParseGPUSpecsCSV(specs)
	if err != nil {
		return nil, fmt.Errorf("gpu specs: %w", err)
	}
	insts, err := ParseInstancePricesCSV(prices)
	if err != nil {
		return nil, fmt.Errorf("gpu prices: %w", err)
	}
	c := &Catalog{Source: source, AsOf: asOf, SpecsSource: GPUSpecsSource, gpus: map[string]GPU{}}
	for _, g := range gpus {
		c.gpus[g.Name] = g
	}
	for _, in := range insts {
		c.add(annotate(in, c.gpus))
	}
	return c, nil
}

func instanceKey(provider, instanceType string) string {
	return strings.ToLower(strings.TrimSpace(provider)) + "\x00" + strings.ToLower(strings.TrimSpace(instanceType))
}

func (c *Catalog) add(in Instance) {
	if c.byKey == nil {
		c.byKey = map[string]int{}
	}
	k := instanceKey(in.Provider, in.InstanceType)
	if i, ok := c.byKey[k]; ok {
		c.instances[i] = in
		return
	}
	c.byKey[k] = len(c.instances)
	c.instances = append(c.instances, in)
}

// GPU returns the specifications of a GPU by any spelling NormalizeGPU understands.
func (c *Catalog) GPU(name string) (GPU, bool) {
	canon, _ := NormalizeGPU(name)
	g, ok := c.gpus[canon]
	return g, ok
}

// GPUs returns all GPU specifications, sorted by name.
func (c *Catalog) GPUs() []GPU {
	out := make([]GPU, 0, len(c.gpus))
	for _, g := range c.gpus {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Instances returns a copy of all instance rows in catalog order (overrides replace rows in place;
// new override rows come last).
func (c *Catalog) Instances() []Instance {
	return append([]Instance(nil), c.instances...)
}

// Instance returns the row for a provider's instance type (case-insensitive).
func (c *Catalog) Instance(provider, instanceType string) (Instance, bool) {
	i, ok := c.byKey[instanceKey(provider, instanceType)]
	if !ok {
		return Instance{}, false
	}
	return c.instances[i], true
}

// InstanceGPU maps a provider's instance type to its GPU (canonical name when known) and GPU count,
// e.g. aws p4d.24xlarge → A100 × 8. It uses the catalog rows first and then the family rules of
// familyRules for types the catalog lacks (any p4d.*, GCP a2-highgpu-Ng, Azure NC*ads_A100_v4, …).
// ok is false for types that have no GPU or are unknown. Count may be fractional (Azure GPU slices).
func (c *Catalog) InstanceGPU(provider, instanceType string) (gpu string, count float64, ok bool) {
	if in, found := c.Instance(provider, instanceType); found && in.GPU != "" && in.GPUCount > 0 {
		return in.GPU, in.GPUCount, true
	}
	return familyGPU(provider, instanceType)
}

// WithPrices returns a new catalog in which the given rows take precedence: a row with the same
// provider and instance type replaces the catalog's prices (GPU and count are kept from the catalog
// when the override leaves them empty), other rows are added. Override rows are trusted: they are
// not marked suspicious, and their Source is sourceLabel (e.g. "negotiated rates 2026-07" or
// "effective rate from your AWS bills, June 2026"). Use it both for negotiated prices and for the
// effective $/instance-hour learned from an org's own bills. The receiver is not modified.
func (c *Catalog) WithPrices(overrides []Instance, sourceLabel string) *Catalog {
	n := &Catalog{
		Source:      c.Source,
		AsOf:        c.AsOf,
		SpecsSource: c.SpecsSource,
		gpus:        c.gpus,
		instances:   append([]Instance(nil), c.instances...),
		byKey:       make(map[string]int, len(c.byKey)),
	}
	for k, v := range c.byKey {
		n.byKey[k] = v
	}
	if len(overrides) > 0 && sourceLabel != "" {
		n.Source = c.Source + "; overridden by " + sourceLabel
	}
	for _, o := range overrides {
		o.Provider = strings.ToLower(strings.TrimSpace(o.Provider))
		base, had := c.Instance(o.Provider, o.InstanceType)
		if had {
			o.InstanceType = base.InstanceType
			if o.GPU == "" || o.GPUCount == 0 {
				o.GPU, o.GPUCount = base.GPU, base.GPUCount
			}
			if o.Region == "" {
				o.Region = base.Region
			}
			if o.VCPUs == 0 {
				o.VCPUs = base.VCPUs
			}
			if o.MemoryGiB == 0 {
				o.MemoryGiB = base.MemoryGiB
			}
		} else if o.GPU == "" || o.GPUCount == 0 {
			if g, cnt, ok := familyGPU(o.Provider, o.InstanceType); ok {
				o.GPU, o.GPUCount = g, cnt
			}
		}
		if canon, ok := NormalizeGPU(o.GPU); ok {
			o.GPU = canon
		}
		o.Source = sourceLabel
		o.Override = true
		o.Suspicious = false
		o.Flags = nil
		if o.Fractional() {
			o.Flags = append(o.Flags, "fractional GPU: not used by the advisor")
		}
		if _, ok := n.gpus[o.GPU]; !ok && o.GPU != "" {
			o.Flags = append(o.Flags, "no specifications for GPU "+o.GPU+": not used by the advisor")
		}
		n.add(o)
	}
	return n
}

// annotate applies the data-quality rules (docs/advisor.md, "Instance prices") to an embedded catalog row.
func annotate(in Instance, gpus map[string]GPU) Instance {
	src := in.Source
	it := strings.ToLower(in.InstanceType)
	if in.Provider == "gcp" && (strings.HasPrefix(it, "a2-") || strings.HasPrefix(it, "a3-") || strings.HasPrefix(it, "a4-")) {
		in.Suspicious = true
		if strings.Contains(src, "cross-region median") {
			in.Flags = append(in.Flags, "GCP GPU price in this region is under 60% of the cross-region median (likely a DWS/flex-start or commitment SKU listed as on-demand); verify before relying on it")
		} else {
			in.Flags = append(in.Flags, "GCP a2/a3/a4 GPU prices vary up to 2.3× across regions and may be a discounted tier; taken from the catalog as-is, verify before relying on it")
		}
	}
	if in.OnDemand == nil {
		in.Flags = append(in.Flags, "no on-demand price (capacity blocks only)")
	}
	if in.OnDemand != nil && in.Spot != nil && in.Spot.GreaterThanOrEqual(*in.OnDemand) {
		in.Spot = nil
		in.Flags = append(in.Flags, "catalog spot price is not below on-demand (placeholder): no spot price assumed")
	}
	if strings.Contains(src, "swap") {
		in.Flags = append(in.Flags, "on-demand and spot columns were swapped in the upstream catalog; corrected here")
	}
	if strings.Contains(src, "derived") {
		in.Flags = append(in.Flags, "price derived by linearity from other sizes, not read directly")
	}
	if in.Provider == "vast" {
		in.Flags = append(in.Flags, "marketplace offer: price and availability move hourly")
	}
	if in.Fractional() {
		in.Flags = append(in.Flags, "fractional GPU: not used by the advisor")
	}
	if _, ok := gpus[in.GPU]; !ok {
		in.Flags = append(in.Flags, "no specifications for GPU "+in.GPU+": not used by the advisor")
	}
	return in
}

// ParseGPUSpecsCSV reads a table shaped like gpu_specs.csv (columns found by header name:
// gpu, vendor, memory_gb, bandwidth_gbs, bf16_dense_tflops, fp8_dense_tflops, int8_dense_tops,
// tdp_w, nvlink, notes, and the capability columns architecture, bf16, fp8, int8, int4, ecc,
// class, caps_source). Errors name the line and column.
func ParseGPUSpecsCSV(r io.Reader) ([]GPU, error) {
	t, err := newTable(r, "gpu", "memory_gb", "bandwidth_gbs", "bf16_dense_tflops")
	if err != nil {
		return nil, err
	}
	var out []GPU
	for t.next() {
		g := GPU{
			Name:         t.str("gpu"),
			Vendor:       strings.ToLower(t.str("vendor")),
			MemoryGB:     t.float("memory_gb", true, quantity.Factor),
			BandwidthGBs: t.float("bandwidth_gbs", true, quantity.Factor),
			BF16TFLOPS:   t.float("bf16_dense_tflops", true, quantity.Factor),
			FP8TFLOPS:    t.float("fp8_dense_tflops", false, quantity.Factor),
			INT8TOPS:     t.float("int8_dense_tops", false, quantity.Factor),
			TDPWatts:     t.float("tdp_w", false, quantity.Factor),
			NVLink:       strings.ToLower(t.str("nvlink")),
			Notes:        t.str("notes"),
			Architecture: t.str("architecture"),
			CapsSource:   t.str("caps_source"),
			Class:        strings.ToLower(t.str("class")),
		}
		// Without capability columns a format is taken as supported when
		// the table gives its throughput (and BF16 always), on a datacenter card.
		g.BF16 = t.yesNo("bf16", true)
		g.FP8 = t.yesNo("fp8", g.FP8TFLOPS > 0)
		g.INT8 = t.yesNo("int8", g.INT8TOPS > 0)
		g.INT4 = t.yesNo("int4", true)
		g.ECC = t.yesNo("ecc", true)
		switch g.Class {
		case "":
			g.Class = ClassDatacenter
		case ClassDatacenter, ClassWorkstation, ClassConsumer:
		default:
			t.fail("class", fmt.Sprintf("%q is not datacenter, workstation or consumer", g.Class))
		}
		if g.Name == "" {
			t.fail("gpu", "empty GPU name")
		}
		out = append(out, g)
	}
	return out, t.err
}

// yesNo reads a yes/no column; an empty or missing cell is def.
func (t *table) yesNo(col string, def bool) bool {
	switch s := strings.ToLower(t.str(col)); s {
	case "":
		return def
	case "yes", "true":
		return true
	case "no", "false":
		return false
	default:
		t.fail(col, fmt.Sprintf("%q is not yes or no", s))
		return def
	}
}

// ParseInstancePricesCSV reads per-instance prices in the shape of gpu_prices.csv: columns
// provider, instance_type (required), region, gpu, gpu_count, vcpus, memory_gib,
// price_on_demand_usd_hr, price_spot_usd_hr, source (optional; columns are found by header name,
// so an org's upload may carry only provider, instance_type and one price). Each row needs at
// least one price. GPU names are normalised with NormalizeGPU (RunPod's "H100" is the PCIe card).
// Errors look like `line 12, column price_spot_usd_hr: "1,5" is not a number`.
func ParseInstancePricesCSV(r io.Reader) ([]Instance, error) {
	t, err := newTable(r, "provider", "instance_type")
	if err != nil {
		return nil, err
	}
	if !t.has("price_on_demand_usd_hr") && !t.has("price_spot_usd_hr") {
		return nil, errors.New("line 1: need a price_on_demand_usd_hr or price_spot_usd_hr column")
	}
	var out []Instance
	for t.next() {
		in := Instance{
			Provider:     strings.ToLower(t.str("provider")),
			Region:       t.str("region"),
			InstanceType: t.str("instance_type"),
			GPU:          t.str("gpu"),
			GPUCount:     t.float("gpu_count", false, quantity.GPUs),
			VCPUs:        t.float("vcpus", false, quantity.Factor),
			MemoryGiB:    t.float("memory_gib", false, quantity.Factor),
			OnDemand:     t.money("price_on_demand_usd_hr"),
			Spot:         t.money("price_spot_usd_hr"),
			Source:       t.str("source"),
		}
		switch {
		case in.Provider == "":
			t.fail("provider", "empty provider")
		case in.InstanceType == "":
			t.fail("instance_type", "empty instance type")
		case in.OnDemand == nil && in.Spot == nil && t.err == nil:
			t.fail("price_on_demand_usd_hr", "no on-demand or spot price")
		}
		if in.GPU != "" {
			if canon, ok := NormalizeGPU(in.GPU); ok {
				in.GPU = canon
			}
			in.GPU = instanceGPUHint(in.Provider, in.InstanceType, in.GPU)
		}
		out = append(out, in)
	}
	return out, t.err
}

// table is a small header-addressed CSV reader that records the first error with line and column.
type table struct {
	r     *csv.Reader
	cols  map[string]int
	names []string // the header, trimmed, for error messages
	row   []string
	line  int
	err   error
}

func newTable(r io.Reader, required ...string) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("line 1: empty file, expected a header row")
		}
		return nil, fmt.Errorf("line 1: %w", err)
	}
	t := &table{r: cr, cols: map[string]int{}}
	for i, h := range header {
		if p := textProblem(h); p != "" {
			return nil, fmt.Errorf("line 1, header field %d %q: %s; save the file as UTF-8", i+1, h, p)
		}
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		t.cols[h] = i
		t.names = append(t.names, h)
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("line 1: missing column %q", c)
		}
	}
	return t, nil
}

func (t *table) has(col string) bool { _, ok := t.cols[col]; return ok }

func (t *table) next() bool {
	if t.err != nil {
		return false
	}
	for {
		row, err := t.r.Read()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.err = err // csv.ParseError already names line and column
			return false
		}
		t.line, _ = t.r.FieldPos(0)
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		// Price lists uploaded by users are stored (instance types, notes):
		// a cell Postgres text cannot hold is refused here, with its place,
		// rather than failing the whole save as a server error.
		for i, cell := range row {
			if p := textProblem(cell); p != "" {
				col := fmt.Sprintf("field %d", i+1)
				if i < len(t.names) {
					col = t.names[i]
				}
				if len(cell) > 40 {
					cell = cell[:40] + "…"
				}
				t.err = fmt.Errorf("line %d, column %s: %q %s; save the file as UTF-8", t.line, col, cell, p)
				return false
			}
		}
		t.row = row
		return true
	}
}

// textProblem says why s cannot be stored as Postgres text (which holds
// UTF-8 without NUL), or "" when it can.
func textProblem(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL byte"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	return ""
}

func (t *table) str(col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(t.row) {
		return ""
	}
	return strings.TrimSpace(t.row[i])
}

func (t *table) fail(col, msg string) {
	if t.err == nil {
		t.err = fmt.Errorf("line %d, column %s: %s", t.line, col, msg)
	}
}

// numberError words a bad cell: what quantity says, except that a negative
// value "is negative" (or what negative says).
func numberError(s string, err error, negative string) string {
	if errors.Is(err, quantity.ErrOutOfRange) && strings.HasPrefix(s, "-") {
		return fmt.Sprintf("%q %s", s, negative)
	}
	return err.Error()
}

// float reads a number column, bounded by k (quantity's kinds): a price
// list is uploaded by users, and an infinite or absurd spec would make the
// model's hours infinite.
func (t *table) float(col string, required bool, k quantity.Kind) float64 {
	s := t.str(col)
	if s == "" {
		if required {
			t.fail(col, "missing value")
		}
		return 0
	}
	d, err := k.Parse("", s)
	if err != nil {
		t.fail(col, numberError(s, err, "is negative"))
		return 0
	}
	return d.InexactFloat64()
}

func (t *table) money(col string) *decimal.Decimal {
	s := strings.TrimPrefix(t.str(col), "$")
	if s == "" {
		return nil
	}
	d, err := quantity.Price.Parse("", s)
	if err != nil {
		t.fail(col, numberError(s, err, "is negative"))
		return nil
	}
	if d.IsZero() {
		return nil // catalogs write 0 for "not quoted"
	}
	return &d
}
