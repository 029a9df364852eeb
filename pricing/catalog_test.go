package pricing

import (
	"bytes"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// approx fails the test unless got is within rel (relative) of want.
func approx(t *testing.T, name string, got, want, rel float64) {
	t.Helper()
	if want == 0 {
		if got != 0 {
			t.Errorf("%s = %g, want 0", name, got)
		}
		return
	}
	if d := (got - want) / want; d > rel || d < -rel {
		t.Errorf("%s = %g, want %g ±%g%%", name, got, want, rel*100)
	}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestEmbeddedDataParses(t *testing.T) {
	t.Parallel()
	// The default accessors panic only on corrupt embedded data; parsing it here proves they don't.
	c, err := NewCatalog(bytes.NewReader(gpuSpecsCSV), bytes.NewReader(gpuPricesCSV), GPUPricesSource, GPUPricesAsOf)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Instances()); got != 286 {
		t.Errorf("instances = %d, want 286 (docs/advisor.md, Instance prices)", got)
	}
	if got := len(c.GPUs()); got != 21 {
		t.Errorf("gpus = %d, want 21", got)
	}
	if DefaultCatalog().Source == "" || DefaultCatalog().AsOf == "" {
		t.Error("default catalog has no source/date")
	}
	ps, err := ParseLLMPricesCSV(bytes.NewReader(llmPricesCSV))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 99 {
		t.Errorf("llm prices = %d, want 99", len(ps))
	}
	if DefaultLLMPrices().Source == "" || DefaultLLMPrices().AsOf != "2026-07-24" {
		t.Error("default LLM table has no source/date")
	}
	if n := len(litellmTable().All()); n < 1500 {
		t.Errorf("LiteLLM fallback has %d chat models, want > 1500", n)
	}
}

func TestCorruptDataIsAnErrorNotAPanic(t *testing.T) {
	t.Parallel()
	specs := "gpu,vendor,memory_gb,bandwidth_gbs,bf16_dense_tflops\nH100,nvidia,80,3350,989\n"
	tests := []struct {
		name, prices, want string
	}{
		{"BadNumber", "provider,instance_type,gpu,gpu_count,price_on_demand_usd_hr\naws,p5.48xlarge,H100,8,\"12,5\"\n",
			`line 2, column price_on_demand_usd_hr: "12,5" is not a number`},
		{"NoPrice", "provider,instance_type,gpu,gpu_count,price_on_demand_usd_hr,price_spot_usd_hr\naws,p5.48xlarge,H100,8,,\n",
			"line 2, column price_on_demand_usd_hr: no on-demand or spot price"},
		{"MissingColumn", "provider,gpu\naws,H100\n", `line 1: missing column "instance_type"`},
		{"NegativeCount", "provider,instance_type,gpu,gpu_count,price_on_demand_usd_hr\nx,y,H100,1,1\nx,z,H100,-1,1\n",
			`line 3, column gpu_count: "-1" is negative`},
		{"Empty", "", "line 1: empty file, expected a header row"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCatalog(strings.NewReader(specs), strings.NewReader(tt.prices), "test", "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestNormalizeGPU(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"H100": "H100", "H100-SXM": "H100", "H100 80GB": "H100", "NVIDIA H100 80GB HBM3": "H100", "H100-MEGA": "H100",
		"H100 PCIe": "H100-PCIE", "H100-NVL": "H100-NVL", "H200-SXM": "H200",
		"A100-80GB": "A100-80GB", "A100 80GB": "A100-80GB", "A100-80GB-SXM": "A100-80GB", "NVIDIA A100-SXM4-80GB": "A100-80GB",
		"Tesla A100": "A100", "A100": "A100", "A100 40GB": "A100",
		"A6000": "RTXA6000", "RTXA6000": "RTXA6000", "RTX A6000": "RTXA6000", "RTX4090": "RTX4090", "RTX 4090": "RTX4090",
		"GeForce RTX 4090 24GB": "RTX4090", "L40S": "L40S", "Tesla T4": "T4", "nvidia-tesla-t4": "T4",
		"V100-32GB": "V100-32GB", "Tesla V100": "V100", "MI300X": "MI300X", "AMD Instinct MI300X": "MI300X",
		"L4": "L4", "RTX6000-Ada": "RTX6000-Ada", "A10G": "A10G",
	}
	for in, want := range tests {
		got, ok := NormalizeGPU(in)
		if !ok || got != want {
			t.Errorf("NormalizeGPU(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, unknown := range []string{"M60", "GB200", "Radeon Pro V520", ""} {
		if _, ok := NormalizeGPU(unknown); ok {
			t.Errorf("NormalizeGPU(%q) ok, want unknown", unknown)
		}
	}
}

func TestInstanceGPU(t *testing.T) {
	t.Parallel()
	c := DefaultCatalog()
	tests := []struct {
		provider, instanceType, gpu string
		count                       float64
	}{
		// Catalog rows.
		{"aws", "p4d.24xlarge", "A100", 8},
		{"aws", "p5.48xlarge", "H100", 8},
		{"aws", "g5.xlarge", "A10G", 1},
		{"AWS", "P5.4XLARGE", "H100", 1},
		{"azure", "Standard_ND96isr_H100_v5", "H100", 8},
		{"runpod", "1x_H100_SECURE", "H100-PCIE", 1}, // RunPod "H100" is the PCIe card
		{"runpod", "2x_H100-SXM_SECURE", "H100", 2},
		{"lambda", "gpu_1x_h100_pcie", "H100-PCIE", 1},
		{"lambda", "gpu_4x_a6000", "RTXA6000", 4},
		{"gcp", "n1-standard-8+4xT4", "T4", 4},
		// Family fallback (types not in the CSV).
		{"aws", "p4d.12xlarge", "A100", 8},
		{"aws", "g5.96xlarge", "A10G", 1},
		{"aws", "g6e.48xlarge", "L40S", 8},
		{"aws", "g4dn.metal", "T4", 8},
		{"gcp", "a2-highgpu-3g", "A100", 3},
		{"gcp", "a2-ultragpu-2g", "A100-80GB", 2},
		{"gcp", "a3-highgpu-8g", "H100", 8},
		{"google", "a3-megagpu-8g", "H100", 8},
		{"gcp", "g2-standard-48", "L4", 4},
		{"gcp", "g2-standard-8", "L4", 1},
		{"gcp", "n1-standard-16+2xV100", "V100", 2},
		{"azure", "Standard_NC24ads_A100_v4", "A100-80GB", 1},
		{"azure", "standard_nc96ads_a100_v4", "A100-80GB", 4},
		{"azure", "Standard_ND96asr_v4", "A100", 8},
		{"azure", "Standard_NC12s_v3", "V100", 2},
		{"azure", "Standard_NV12ads_A10_v5", "A10", 0.333},
	}
	for _, tt := range tests {
		gpu, n, ok := c.InstanceGPU(tt.provider, tt.instanceType)
		if !ok || gpu != tt.gpu || n != tt.count {
			t.Errorf("InstanceGPU(%s, %s) = %s × %g, %v; want %s × %g", tt.provider, tt.instanceType, gpu, n, ok, tt.gpu, tt.count)
		}
	}
	for _, it := range []string{"m5.large", "t3.micro"} {
		if g, n, ok := c.InstanceGPU("aws", it); ok {
			t.Errorf("InstanceGPU(aws, %s) = %s × %g, want no GPU", it, g, n)
		}
	}
	if _, _, ok := familyGPU("gcp", "a2-highgpu-1g"); !ok {
		t.Error("family rule for a2-highgpu-1g missing")
	}
}

func TestDataQualityFlags(t *testing.T) {
	t.Parallel()
	c := DefaultCatalog()
	get := func(p, it string) Instance {
		in, ok := c.Instance(p, it)
		if !ok {
			t.Fatalf("%s %s missing", p, it)
		}
		return in
	}
	// GCP rows flagged in source, and the unflagged a3-ultragpu (H200) tier: suspicious.
	for _, it := range []string{"a3-highgpu-8g", "a2-highgpu-1g", "a3-ultragpu-8g", "a2-ultragpu-1g"} {
		if in := get("gcp", it); !in.Suspicious || len(in.Flags) == 0 {
			t.Errorf("gcp %s suspicious=%v flags=%v, want flagged", it, in.Suspicious, in.Flags)
		}
	}
	if in := get("gcp", "g2-standard-4"); in.Suspicious {
		t.Errorf("gcp g2-standard-4 flagged suspicious: %v", in.Flags)
	}
	if in := get("aws", "p5e.48xlarge"); in.OnDemand != nil || in.Spot == nil {
		t.Errorf("p5e: on-demand %v spot %v, want no on-demand and a spot price", in.OnDemand, in.Spot)
	}
	// Azure H200 v5: spot == on-demand in the catalog is a placeholder, not a spot offer.
	if in := get("azure", "Standard_ND96isr_H200_v5"); in.Spot != nil {
		t.Errorf("ND96isr_H200_v5 spot = %v, want none (placeholder)", in.Spot)
	}
	if in := get("azure", "Standard_ND96isr_H100_v5"); in.GPUCount != 8 || in.Spot == nil || !in.Spot.LessThan(*in.OnDemand) {
		t.Errorf("ND96isr_H100_v5 = %+v, want 8 GPUs with a discounted spot price", in)
	}
	if in := get("runpod", "1x_L40S_SECURE"); !in.OnDemand.Equal(dec("0.86")) || !in.Spot.Equal(dec("0.43")) {
		t.Errorf("RunPod L40S = %v/%v, want 0.86 on-demand / 0.43 spot (swap corrected)", in.OnDemand, in.Spot)
	}
	if in := get("azure", "Standard_NV6ads_A10_v5"); !in.Fractional() {
		t.Error("NV6ads_A10_v5 not fractional")
	}
}

func TestWithPricesOverrides(t *testing.T) {
	t.Parallel()
	csv := "provider,instance_type,price_on_demand_usd_hr,price_spot_usd_hr\n" +
		"aws,p5.48xlarge,30.00,\n" +
		"aws,p4d.12xlarge,9.5,\n" + // not in the catalog: GPU from the family rule
		"acme,box-1,1.00,\n"
	ov, err := ParseInstancePricesCSV(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	base := DefaultCatalog()
	c := base.WithPrices(ov, "negotiated rates 2026")
	p5, _ := c.Instance("aws", "p5.48xlarge")
	if !p5.OnDemand.Equal(dec("30")) || p5.Spot != nil || p5.GPU != "H100" || p5.GPUCount != 8 || !p5.Override || p5.Source != "negotiated rates 2026" {
		t.Errorf("override p5 = %+v", p5)
	}
	if orig, _ := base.Instance("aws", "p5.48xlarge"); !orig.OnDemand.Equal(dec("55.04")) {
		t.Errorf("base catalog modified: %v", orig.OnDemand)
	}
	if g, n, ok := c.InstanceGPU("aws", "p4d.12xlarge"); !ok || g != "A100" || n != 8 {
		t.Errorf("new override row GPU = %s × %g", g, n)
	}
	if _, ok := c.Instance("acme", "box-1"); !ok {
		t.Error("new provider row missing")
	}
	if !strings.Contains(c.Source, "negotiated rates 2026") {
		t.Errorf("source = %q", c.Source)
	}
}

// TestImportsStayPure keeps pricing on the standard library plus shopspring/decimal (docs/architecture.md, "Dependency direction"),
// and quantity, the bounded number parser, which is itself only those.
func TestImportsStayPure(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("*.go")
	quantityFiles, _ := filepath.Glob("../quantity/*.go")
	files = append(files, quantityFiles...)
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "github.com/burnrate/burnrate/quantity" && !strings.HasPrefix(f, "../") {
				continue
			}
			if p != "github.com/shopspring/decimal" && strings.Contains(strings.Split(p, "/")[0], ".") {
				t.Errorf("%s imports %s", f, p)
			}
			if p == "os" || p == "net/http" || p == "net" {
				t.Errorf("%s imports %s: pricing does no I/O", f, p)
			}
		}
	}
}

// TestPriceListRefusesTextPostgresCannotStore: an uploaded price list is
// stored, so a cell that is not UTF-8 or holds a NUL is refused with its
// line and column.
func TestPriceListRefusesTextPostgresCannotStore(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"provider,instance_type,price_on_demand_usd_hr\naws,p5.48xlarge,8\naws,caf\xe9,1\n": `line 3, column instance_type: "caf\xe9" is not valid UTF-8; save the file as UTF-8`,
		"provider,instance_type,price_on_demand_usd_hr,note\naws,p5.48xlarge,8,a\x00b\n":    `line 2, column note: "a\x00b" contains a NUL byte; save the file as UTF-8`,
		"provider,instance_type,price_on_demand_usd_hr,r\xe9gion\naws,p5.48xlarge,8,x\n":    `line 1, header field 4 "r\xe9gion": is not valid UTF-8; save the file as UTF-8`,
	} {
		_, err := ParseInstancePricesCSV(strings.NewReader(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %s", in, err, want)
		}
	}
}
