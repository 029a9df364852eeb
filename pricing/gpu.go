package pricing

import (
	"strings"
)

// GPU is one accelerator model with the datasheet figures the advisor needs.
// Throughputs are dense (no 2:4 sparsity) peak figures per GPU.
type GPU struct {
	// Name is the canonical name used throughout the package (gpu_specs.csv), e.g. "H100", "A100-80GB".
	Name string `json:"name"`
	// Vendor is "nvidia" or "amd".
	Vendor string `json:"vendor"`
	// MemoryGB is the on-board memory in GB (1e9 bytes, as vendors quote it).
	MemoryGB float64 `json:"memory_gb"`
	// BandwidthGBs is the memory bandwidth in GB/s.
	BandwidthGBs float64 `json:"bandwidth_gbs"`
	// BF16TFLOPS is the dense BF16/FP16 tensor throughput in TFLOPS.
	BF16TFLOPS float64 `json:"bf16_tflops"`
	// FP8TFLOPS is the dense FP8 tensor throughput in TFLOPS; 0 when the GPU has no FP8 tensor cores.
	FP8TFLOPS float64 `json:"fp8_tflops"`
	// INT8TOPS is the dense INT8 tensor throughput in TOPS; 0 when the GPU has no INT8 tensor cores.
	INT8TOPS float64 `json:"int8_tops"`
	// TDPWatts is the board power.
	TDPWatts float64 `json:"tdp_w"`
	// NVLink is "yes" (full NVLink/NVSwitch between the GPUs of a node), "bridge" (2-way bridge only) or "no".
	NVLink string `json:"nvlink"`
	// Notes carries the caveats of gpu_specs.csv.
	Notes string `json:"notes,omitempty"`
	// Architecture is the GPU generation, e.g. "Volta", "Ampere", "Hopper" (docs/advisor.md, "GPU capabilities").
	Architecture string `json:"architecture,omitempty"`
	// BF16, FP8, INT8 and INT4 say whether the GPU runs that format natively: BF16/FP8/INT8 tensor
	// cores, and for INT4 the 4-bit weight-only kernels of the mainstream serving engines.
	BF16 bool `json:"bf16"`
	FP8  bool `json:"fp8"`
	INT8 bool `json:"int8"`
	INT4 bool `json:"int4"`
	// ECC is true when the memory has error correction.
	ECC bool `json:"ecc"`
	// Class is "datacenter", "workstation" or "consumer" (GeForce).
	Class string `json:"class,omitempty"`
	// CapsSource names the datasheets and whitepapers the capability columns come from.
	CapsSource string `json:"caps_source,omitempty"`
}

// GPU classes (gpu_specs.csv, column class).
const (
	ClassDatacenter  = "datacenter"
	ClassWorkstation = "workstation"
	ClassConsumer    = "consumer"
)

// FastInterconnect reports whether GPUs of this type in one node talk over a fast all-to-all
// fabric (NVLink/NVSwitch, or AMD Infinity Fabric on MI300X), which data/tensor-parallel training
// needs to keep its MFU. PCIe and 2-way bridges count as slow.
func (g GPU) FastInterconnect() bool {
	return g.NVLink == "yes" || (g.Vendor == "amd" && strings.HasPrefix(g.Name, "MI3"))
}

// PeakTFLOPS returns the dense peak for the given precision: the BF16 column for bf16/fp16 and
// for int4 (weight-only quantisation computes in 16-bit), the FP8/INT8 columns when the GPU has such
// tensor cores (else the BF16 rate), and half the BF16 rate for fp32 (TF32 tensor cores run at half
// the BF16 rate on A100/H100-class parts).
func (g GPU) PeakTFLOPS(p Precision) float64 {
	switch p {
	case FP32:
		return g.BF16TFLOPS / 2
	case FP8:
		if g.FP8TFLOPS > 0 {
			return g.FP8TFLOPS
		}
	case INT8:
		if g.INT8TOPS > 0 {
			return g.INT8TOPS
		}
	}
	return g.BF16TFLOPS
}

// gpuAliases maps an alias key (see aliasKey) to the canonical gpu_specs.csv name.
// Keys are written in their aliasKey form: lower case with spaces, dashes, underscores removed.
var gpuAliases = map[string]string{
	// H100 family: plain "H100" in provider catalogs means SXM 80GB except where noted per provider.
	"h100": "H100", "h100sxm": "H100", "h100sxm5": "H100", "h10080gb": "H100", "h100sxm80gb": "H100",
	"nvidiah10080gbhbm3": "H100", "nvidiah100": "H100", "h100mega": "H100", "h100mega80gb": "H100",
	"nvidiah100sxm": "H100", "h10080gbhbm3": "H100", "teslah100": "H100",
	"h100pcie": "H100-PCIE", "h100pcie80gb": "H100-PCIE", "nvidiah100pcie": "H100-PCIE",
	"h100nvl": "H100-NVL", "nvidiah100nvl": "H100-NVL", "h100nvl94gb": "H100-NVL",
	"h200": "H200", "h200sxm": "H200", "h200141gb": "H200", "nvidiah200": "H200",
	"b200": "B200", "nvidiab200": "B200", "b200sxm": "B200", "b200sxm6": "B200",
	// A100: without a size the 40GB part.
	"a100": "A100", "a10040gb": "A100", "a100sxm4": "A100", "a100sxm440gb": "A100", "a100pcie": "A100",
	"a100pcie40gb": "A100", "teslaa100": "A100", "nvidiaa100": "A100", "nvidiaa100sxm440gb": "A100",
	"a10080gb": "A100-80GB", "a10080gbsxm": "A100-80GB", "a100sxm80gb": "A100-80GB", "a100sxm480gb": "A100-80GB",
	"a10080gbpcie": "A100-80GB", "nvidiaa10080gb": "A100-80GB", "nvidiaa100sxm480gb": "A100-80GB",
	"a100pcie80gb": "A100-80GB", "teslaa10080gb": "A100-80GB",
	"l40s": "L40S", "nvidial40s": "L40S", "l40": "L40", "nvidial40": "L40", "a40": "A40", "nvidiaa40": "A40",
	"l4": "L4", "nvidial4": "L4", "a10g": "A10G", "nvidiaa10g": "A10G", "a10": "A10", "nvidiaa10": "A10",
	"t4": "T4", "teslat4": "T4", "nvidiat4": "T4", "nvidiateslat4": "T4",
	"v100": "V100", "teslav100": "V100", "v10016gb": "V100", "v100sxm2": "V100", "v100sxm216gb": "V100",
	"nvidiateslav100": "V100", "nvidiav100": "V100",
	"v10032gb": "V100-32GB", "v100sxm232gb": "V100-32GB", "teslav10032gb": "V100-32GB",
	"a6000": "RTXA6000", "rtxa6000": "RTXA6000", "nvidiartxa6000": "RTXA6000",
	"rtx6000ada": "RTX6000-Ada", "nvidiartx6000ada": "RTX6000-Ada", "nvidiartx6000adageneration": "RTX6000-Ada",
	"rtx4090": "RTX4090", "geforcertx4090": "RTX4090", "nvidiageforcertx4090": "RTX4090",
	"rtx3090": "RTX3090", "geforcertx3090": "RTX3090", "nvidiageforcertx3090": "RTX3090",
	"mi300x": "MI300X", "amdmi300x": "MI300X", "instinctmi300x": "MI300X", "amdinstinctmi300x": "MI300X",
}

// aliasKey folds a GPU spelling to a lookup key: lower case letters and digits only
// (spaces, dashes, underscores and dots dropped); vendor words stay, so aliases list both forms.
func aliasKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// NormalizeGPU maps a provider's spelling of a GPU ("H100-SXM", "NVIDIA H100 80GB HBM3", "A100 80GB",
// "Tesla T4", "RTX A6000", …) to the canonical name of gpu_specs.csv. ok is false for GPUs the
// catalog has no specifications for (e.g. "M60", "GB200"); canonical is then name trimmed.
func NormalizeGPU(name string) (canonical string, ok bool) {
	k := aliasKey(name)
	if c, found := gpuAliases[k]; found {
		return c, true
	}
	// Tolerate a trailing memory size we do not distinguish ("L4 24GB", "RTX 4090 24GB").
	for _, suffix := range []string{"16gb", "24gb", "32gb", "48gb", "80gb", "94gb", "141gb", "180gb", "192gb"} {
		if base, cut := strings.CutSuffix(k, suffix); cut {
			if c, found := gpuAliases[base]; found {
				return c, true
			}
		}
	}
	return strings.TrimSpace(name), false
}

// instanceGPUHint refines a catalog row's GPU name using its instance type, for providers whose
// catalog collapses variants: RunPod "H100" is the PCIe card (H100-SXM is listed separately),
// Lambda gpu_1x_h100_pcie is PCIe, Vast "H100_NVL" offers are NVL cards.
func instanceGPUHint(provider, instanceType, gpu string) string {
	it := strings.ToLower(instanceType)
	switch {
	case gpu == "H100" && provider == "runpod" && !strings.Contains(it, "sxm") && !strings.Contains(it, "nvl"):
		return "H100-PCIE"
	case gpu == "H100" && strings.Contains(it, "h100_pcie"):
		return "H100-PCIE"
	case gpu == "H100" && strings.Contains(it, "h100_nvl"):
		return "H100-NVL"
	}
	return gpu
}
