package pricing

import (
	"fmt"
	"math"
)

// The training time model: where the time of a training step goes
// (docs/advisor.md, "Training time"). One set of equations for a 1B and a
// 405B model: dense matmul FLOPs at an achievable fraction of the GPU's
// peak for its generation and precision, attention FLOPs at a lower rate,
// data-parallel (FSDP) and tensor-parallel communication over the
// instance's links, a fixed overhead per optimizer step, and the restarts
// hardware failures cost a cluster of n GPUs.

// archTraining is what a GPU generation brings to training: the share of
// its dense 16-bit peak that whole published pre-training runs reached on
// matmuls, and its per-GPU link bandwidths.
type archTraining struct {
	// matmul is the achievable fraction of the dense 16-bit peak.
	matmul float64
	// basis says where matmul comes from, for the explanation.
	basis string
	// nvlinkGBs is one GPU's NVLink (or Infinity Fabric) bandwidth to the
	// others of its node, one direction, GB/s; 0 without one.
	nvlinkGBs float64
	// networkGBs is one GPU's share of the node's scale-out network, GB/s.
	networkGBs float64
}

// Calibrated achievable matmul fractions (docs/advisor.md, "Calibration").
const (
	ampereMatmul = 0.49
	hopperMatmul = 0.36
)

// archTrainingFacts are the training figures per GPU architecture
// (gpu_specs.csv's architecture column). Ampere and Hopper are calibrated
// on published runs; the others take the figure of the closest calibrated
// generation and say so. Link bandwidths are the DGX/HGX reference designs:
// NVLink 3 (300 GB/s per GPU per direction) and 8 × 200 Gb/s HDR InfiniBand
// on A100 nodes, NVLink 4 (450 GB/s) and 8 × 400 Gb/s NDR on H100/H200,
// NVLink 5 (900 GB/s) and 400 Gb/s per GPU on B200, Infinity Fabric
// (7 × 64 GB/s) and 400 Gb/s per GPU on MI300X.
var archTrainingFacts = map[string]archTraining{
	"Ampere":       {ampereMatmul, "calibrated on published A100 runs", 300, 25},
	"Hopper":       {hopperMatmul, "calibrated on published H100 runs", 450, 50},
	"Blackwell":    {hopperMatmul, "not calibrated: taken as Hopper's", 900, 50},
	"Ada Lovelace": {hopperMatmul, "not calibrated: taken as Hopper's", 0, 0},
	"CDNA 3":       {hopperMatmul, "not calibrated: taken as Hopper's", 448, 50},
	"Volta":        {ampereMatmul, "not calibrated: taken as Ampere's", 150, 12.5},
	"Turing":       {ampereMatmul, "not calibrated: taken as Ampere's", 0, 0},
}

// fp8MatmulFactor is the share of the bf16 fraction an fp8 run reaches of
// the (doubled) fp8 peak: scaling, casts and the non-matmul work do not
// speed up, so fp8 training gains about 1.3×, not 2×, over bf16.
const fp8MatmulFactor = 0.65

// trainingArch returns g's training figures, defaulting to Hopper's
// fraction without links for an architecture the table lacks.
func trainingArch(g GPU) archTraining {
	if f, ok := archTrainingFacts[g.Architecture]; ok {
		return f
	}
	return archTraining{matmul: hopperMatmul, basis: "unknown architecture: taken as Hopper's"}
}

// MatmulFraction is the achievable share of g's peak at precision p that
// the time model plans on: Assumptions.MFU when set, else the calibrated
// figure of g's generation, × fp8MatmulFactor for fp8 compute.
func (a Assumptions) MatmulFraction(g GPU, p Precision) float64 {
	f := trainingArch(g).matmul
	if a.MFU > 0 {
		f = a.MFU
	}
	if g.computePrecision(p) == FP8 && g.FP8 {
		f *= fp8MatmulFactor
	}
	return f
}

// TrainingConfig is one training-type job on one configuration.
type TrainingConfig struct {
	Job     JobType
	Model   Model
	Tokens  float64 // training tokens
	SeqLen  int
	GPU     GPU
	Prec    Precision // compute precision on GPU
	GPUs    int       // all GPUs
	PerNode int       // GPUs of one instance
	TP      int       // tensor-parallel degree within a node (1: none)
	// Adapters is the trainable parameter count of LoRA and QLoRA.
	Adapters float64
}

// TrainingTime is where the time of a training job goes on one
// configuration (docs/advisor.md, "Training time").
type TrainingTime struct {
	// TokensPerGPU is the tokens each data-parallel rank processes per
	// optimizer step: the global batch over the ranks, at least one sequence.
	TokensPerGPU float64
	// ComputeSec, CommSec, TPCommSec and OverheadSec make up one step:
	// step = max(compute, data-parallel communication) + tensor-parallel
	// communication + overhead.
	ComputeSec, CommSec, TPCommSec, OverheadSec, StepSec float64
	// Hours is the wall-clock time, FailureFactor included.
	Hours float64
	// FailureFactor is 1 + GPUs · λ_fail · (restart + interval/2).
	FailureFactor float64
	// MFU is the model FLOPs (matmuls and attention) over the GPUs' peak
	// in the time without failures.
	MFU float64
	// Busy is the share of a step the GPUs spend computing.
	Busy float64
	// Matmul is the achievable matmul fraction used.
	Matmul float64
	// SlowLinks is true when several GPUs without NVLink share the work
	// (the slow-interconnect factor applies instead of modelled traffic).
	SlowLinks bool
}

// modelFLOPsPerToken is the FLOPs of one training token: factor · N_active
// for the matmuls (6 for training, 4 for LoRA), and 12 · L · s · d_attn for
// attention (4 · L · s · d forward, ×3 with the backward pass; PaLM's
// appendix B, as llm-foundry counts it).
func modelFLOPsPerToken(factor float64, m Model, seqLen int) (matmul, attention float64) {
	d := float64(m.Heads * m.HeadDim)
	if d == 0 {
		d = float64(m.Hidden)
	}
	return factor * m.ActiveParams, 12 * float64(m.Layers) * float64(seqLen) * d
}

// EstimateTrainingTime applies the time model (docs/advisor.md, "Training
// time") to c with the assumptions a.
func EstimateTrainingTime(c TrainingConfig, a Assumptions) TrainingTime {
	factor := a.TrainingFLOPsFactor
	if c.Job == JobLoRA || c.Job == JobQLoRA {
		factor = a.LoRAFLOPsFactor
	}
	n := max(c.GPUs, 1)
	tp := max(c.TP, 1)
	arch := trainingArch(c.GPU)
	peak := c.GPU.PeakTFLOPS(c.GPU.computePrecision(c.Prec)) * 1e12
	t := TrainingTime{Matmul: a.MatmulFraction(c.GPU, c.Prec)}
	eff := t.Matmul
	multi := n > 1
	fast := c.GPU.FastInterconnect() && arch.nvlinkGBs > 0
	if multi && !fast {
		// PCIe or a 2-way bridge: gradient traffic stalls compute.
		eff *= a.SlowInterconnectMFUFactor
		t.SlowLinks = true
	}
	mm, attn := modelFLOPsPerToken(factor, c.Model, c.SeqLen)
	perToken := mm/(peak*eff) + attn/(peak*eff*a.AttentionEfficiency)

	dp := float64(n / tp)
	t.TokensPerGPU = math.Max(a.GlobalBatchTokens/dp, float64(c.SeqLen))
	t.ComputeSec = t.TokensPerGPU * perToken / float64(tp)
	if multi && fast {
		link := arch.nvlinkGBs
		if n > c.PerNode {
			link = arch.networkGBs
		}
		// FSDP: all-gather the weights forward and backward, reduce-scatter
		// the gradients, 16-bit; LoRA all-reduces the adapters' gradients.
		bytes := 3 * 2 * c.Model.Params / float64(tp)
		if c.Job == JobLoRA || c.Job == JobQLoRA {
			bytes = 2 * 2 * c.Adapters
		}
		if dp > 1 {
			t.CommSec = bytes * (dp - 1) / dp / (link * GB)
		}
		if tp > 1 {
			// Four all-reduces of the hidden state per layer and token
			// (Megatron), each moving 2·(t−1)/t of its 2·h bytes.
			perTok := 4 * 2 * float64(tp-1) / float64(tp) * 2 * float64(c.Model.Hidden) * float64(c.Model.Layers)
			t.TPCommSec = t.TokensPerGPU * perTok / (arch.nvlinkGBs * GB)
		}
	}
	t.OverheadSec = a.StepOverheadSeconds
	t.StepSec = math.Max(t.ComputeSec, t.CommSec) + t.TPCommSec + t.OverheadSec
	steps := c.Tokens / (t.TokensPerGPU * dp)
	secs := steps * t.StepSec
	t.FailureFactor = 1 + float64(n)*a.GPUFailuresPerHour*(a.RestartHours+a.CheckpointIntervalHours/2)
	t.Hours = secs / 3600 * t.FailureFactor
	if secs > 0 {
		t.MFU = (mm + attn) * c.Tokens / (float64(n) * peak * secs)
	}
	if t.StepSec > 0 {
		t.Busy = t.ComputeSec / t.StepSec
	}
	return t
}

// busyWarning is the share of a step below which an option says its GPUs
// wait more than they compute.
const busyWarning = 0.6

// explain says in words where the time goes, for the option's reason.
func (t TrainingTime) explain() string {
	s := fmt.Sprintf("MFU %.2f (matmuls at %.2f of peak", t.MFU, t.Matmul)
	if t.SlowLinks {
		s += ", reduced: no NVLink between GPUs"
	}
	s += ")"
	if t.CommSec > 0 || t.TPCommSec > 0 {
		s += fmt.Sprintf("; step %.2f s = compute %.2f s", t.StepSec, t.ComputeSec)
		if t.CommSec > t.ComputeSec {
			s += fmt.Sprintf(" waiting on %.2f s of gradient traffic", t.CommSec)
		} else if t.CommSec > 0 {
			s += fmt.Sprintf(" (hides %.2f s of gradient traffic)", t.CommSec)
		}
		if t.TPCommSec > 0 {
			s += fmt.Sprintf(" + %.2f s tensor-parallel traffic", t.TPCommSec)
		}
		s += fmt.Sprintf(" + %.2f s overhead", t.OverheadSec)
	}
	if t.FailureFactor > 1.005 {
		s += fmt.Sprintf("; +%.0f%% for restarts after hardware failures", (t.FailureFactor-1)*100)
	}
	if t.Busy < busyWarning {
		s += fmt.Sprintf("; too small to keep these GPUs busy: they compute %.0f%% of each step (%s tokens per GPU per step); fewer GPUs or a larger batch would cost less",
			t.Busy*100, fmtInt(t.TokensPerGPU))
	}
	return s
}
