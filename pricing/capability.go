package pricing

import (
	"fmt"
	"math"
)

// What a GPU can run, how much of its memory a job can use, and how busy a
// model of a given size keeps it (docs/advisor.md, "GPU capabilities",
// "Usable memory").

// RunPrecision returns the precision job runs at on g when p is asked for,
// with a note when it differs, or an error saying why g cannot run it:
//
//   - bf16 on a GPU without BF16 (V100, T4) runs as fp16: same bytes, same
//     tensor-core rate, with loss scaling for training;
//   - fp8 inference on an Ampere-class GPU without FP8 tensor cores runs as
//     FP8 weights with 16-bit compute (weight-only kernels); fp8 training
//     needs FP8 tensor cores (Hopper, Ada, Blackwell, CDNA 3);
//   - int8 needs INT8 tensor cores, int4 4-bit weight-only kernels.
func (g GPU) RunPrecision(job JobType, p Precision) (Precision, string, error) {
	arch := g.Architecture
	if arch == "" {
		arch = g.Name
	}
	switch p {
	case BF16:
		if !g.BF16 {
			return FP16, fmt.Sprintf("runs at fp16: %s (%s) has no bf16", g.Name, arch), nil
		}
	case FP8:
		if g.FP8 {
			return p, "", nil
		}
		if job.IsTraining() {
			return "", "", fmt.Errorf("%s (%s) has no FP8 tensor cores; FP8 training needs Hopper, Ada, Blackwell or CDNA 3", g.Name, arch)
		}
		if g.BF16 && g.INT8 {
			return p, fmt.Sprintf("fp8 weights with 16-bit compute: %s (%s) has no FP8 tensor cores", g.Name, arch), nil
		}
		return "", "", fmt.Errorf("%s (%s) has no FP8 support, not even weight-only (needs Ampere or newer)", g.Name, arch)
	case INT8:
		if !g.INT8 {
			return "", "", fmt.Errorf("%s (%s) has no INT8 tensor cores", g.Name, arch)
		}
	case INT4:
		if !g.INT4 {
			return "", "", fmt.Errorf("%s (%s) has no 4-bit weight kernels in the common serving engines", g.Name, arch)
		}
	}
	return p, "", nil
}

// computePrecision is the precision whose peak rate a job at weight
// precision p runs at on g: fp8 weights without FP8 tensor cores compute in
// 16-bit.
func (g GPU) computePrecision(p Precision) Precision {
	if p == FP8 && !g.FP8 {
		return FP16
	}
	return p
}

// Offer kinds: what an option's badge says.
const (
	BadgeConsumer    = "consumer"
	BadgeWorkstation = "workstation"
	BadgeMarketplace = "marketplace"
)

// Marketplace reports whether the provider is a peer marketplace, where
// machines belong to third-party hosts.
func Marketplace(provider string) bool { return provider == "vast" }

// OfferBadge returns the badge and one-line caveat of an instance of GPU g
// from provider, or empty strings for a datacenter GPU from a cloud.
func OfferBadge(provider string, g GPU) (badge, caveat string) {
	switch {
	case Marketplace(provider) && g.Class == ClassConsumer:
		return BadgeMarketplace, fmt.Sprintf("Consumer %s on a peer marketplace: no ECC memory, a third-party host whose uptime, network and data handling vary, and a price that moves hourly.", g.Name)
	case Marketplace(provider):
		return BadgeMarketplace, "Peer marketplace offer: a third-party host whose uptime, network and data handling vary, and a price that moves hourly."
	case g.Class == ClassConsumer:
		return BadgeConsumer, fmt.Sprintf("Consumer %s: no ECC memory, no NVLink switch fabric, and NVIDIA's GeForce licence does not cover datacenter use; fine for experiments.", g.Name)
	case g.Class == ClassWorkstation:
		return BadgeWorkstation, fmt.Sprintf("Workstation %s: ECC memory, but no NVLink switch fabric between more than two cards.", g.Name)
	}
	return "", ""
}

// DatacenterOnlyDefault is whether the "datacenter GPUs only" filter is on
// by default for job: on for serving and for training and full fine-tuning
// (production work), off for LoRA, QLoRA and batch inference (experiments
// and interruptible work).
func DatacenterOnlyDefault(job JobType) bool {
	return job == JobServing || job == JobTraining || job == JobFullFinetune
}

// UsableBytes is the memory a job can use on one GPU of g: MemoryFraction of
// the card less the fixed RuntimeReserveGB (CUDA context, the engine's
// workspace and graphs).
func (a Assumptions) UsableBytes(g GPU) float64 {
	return math.Max(g.MemoryGB*GB*a.MemoryFraction-a.RuntimeReserveGB*GB, 0)
}

// TightUsableBytes is the memory a job can use on one GPU of g without the
// headroom MemoryFraction keeps: the card less the runtime reserve.
func (a Assumptions) TightUsableBytes(g GPU) float64 {
	return math.Max(g.MemoryGB*GB-a.RuntimeReserveGB*GB, 0)
}
