package pricing

import (
	"fmt"
	"math"
)

// GB is 1e9 bytes; memory is compared in vendor gigabytes.
const GB = 1e9

// TrainingMemory is the memory a training-type job needs on n GPUs sharded with ZeRO-3/FSDP.
type TrainingMemory struct {
	// StatesBytes are weights, gradients and optimizer state, split evenly over the GPUs.
	StatesBytes float64
	// ActivationBytesPerGPU are the activations each data-parallel rank holds for its micro-batch
	// without tensor parallelism.
	ActivationBytesPerGPU float64
	// Recompute is the activation strategy assumed.
	Recompute string
}

// PerGPU is the bytes one of n GPUs holds when tensor parallelism of degree tp (1 = none) splits
// each micro-batch's activations over tp GPUs (Korthikanti et al.: activations ÷ t).
func (t TrainingMemory) PerGPU(n, tp int) float64 {
	return t.StatesBytes/float64(n) + t.ActivationBytesPerGPU/float64(tp)
}

// Total is the bytes held across n GPUs with tensor-parallel degree tp.
func (t TrainingMemory) Total(n, tp int) float64 {
	return t.StatesBytes + float64(n)*t.ActivationBytesPerGPU/float64(tp)
}

// EstimateTrainingMemory sizes a training, full fine-tune, LoRA or QLoRA job (docs/advisor.md, "Memory fit"):
// full: TrainingBytesPerParam (16) × N; LoRA: weight bytes × N + adapters × 16 B; QLoRA:
// QLoRABytesPerParam (NF4 with double quantisation, 4.127 bits) × the linear weights + 2 B × the
// embeddings it leaves in 16 bits + adapters × 4 B (bf16 weights and gradients; the paged AdamW state
// lives in host memory when the GPU is full); adapters = Model.LoRAParams or AdapterFraction × N; plus
// activations per GPU of coef·s·b·h·L (coef 34 selective, 2 full, 34+5·a·s/h none) for one
// micro-batch b, and with full recomputation also the one layer being recomputed (34·s·b·h) and the
// logits (6·s·b·vocab: bf16, and fp32 for the loss). For MoE models N is the total parameter count.
func EstimateTrainingMemory(job JobType, m Model, p Precision, seqLen int, a Assumptions) TrainingMemory {
	n := m.Params
	adapters := m.LoRAParams(a.LoRARank)
	if a.AdapterFraction > 0 {
		adapters = a.AdapterFraction * n
	}
	var states float64
	switch job {
	case JobLoRA:
		states = p.BytesPerParam()*n + adapters*16
	case JobQLoRA:
		emb := m.EmbeddingParams()
		states = a.QLoRABytesPerParam*(n-emb) + 2*emb + adapters*4
	default:
		states = a.TrainingBytesPerParam * n
	}
	rc := a.ActivationRecompute
	if rc == "" {
		rc = RecomputeSelective
		if job == JobLoRA || job == JobQLoRA {
			rc = RecomputeFull
		}
	}
	s, b, h, L := float64(seqLen), float64(a.MicroBatch), float64(m.Hidden), float64(m.Layers)
	var act float64
	switch rc {
	case RecomputeFull:
		act = 2*s*b*h*L + 34*s*b*h + 6*s*b*float64(m.Vocab)
	case RecomputeNone:
		act = (34 + 5*float64(m.Heads)*s/h) * s * b * h * L
	default:
		act = 34 * s * b * h * L
	}
	return TrainingMemory{StatesBytes: states, ActivationBytesPerGPU: act, Recompute: rc}
}

// TrainingHours is the wall-clock time of factor·N_active·D FLOPs on gpus GPUs at the given dense
// peak (TFLOPS per GPU) and MFU: hours = factor·N·D / (gpus · peak · MFU · 3600).
func TrainingHours(factor, activeParams, tokens float64, gpus int, peakTFLOPS, mfu float64) float64 {
	return factor * activeParams * tokens / (float64(gpus) * peakTFLOPS * 1e12 * mfu * 3600)
}

// Throughput is the advisor's inference model for one replica (a model instance spread over the
// GPUs of one machine with tensor parallelism; communication overhead ignored).
type Throughput struct {
	// Batch is the concurrent sequences the replica runs.
	Batch int `json:"batch"`
	// MaxBatch is the most sequences whose KV cache fits next to the weights.
	MaxBatch int `json:"max_batch"`
	// DecodeTokensPerSec is generated tokens/s: min(η·BW·B/(W + B·KV_seq), peak·InferenceMFU/(2·N_active)).
	DecodeTokensPerSec float64 `json:"decode_tokens_per_s"`
	// PrefillTokensPerSec is prompt tokens/s, compute-bound: peak·InferenceMFU/(2·N_active).
	PrefillTokensPerSec float64 `json:"prefill_tokens_per_s"`
	// BandwidthBound is true when decode is limited by memory bandwidth, not compute.
	BandwidthBound bool `json:"bandwidth_bound"`
	// MemoryNeededGB is InferenceMemoryOverhead·weights + Batch·KV per sequence.
	MemoryNeededGB float64 `json:"memory_needed_gb"`
	// MemoryAvailableGB is the replica's usable GPU memory (Assumptions.UsableBytes per GPU).
	MemoryAvailableGB float64 `json:"memory_available_gb"`
}

// MixedTokensPerSec is the total (prompt + generated) tokens/s for a workload whose tokens are
// inputShare prompt tokens: 1 / (share/prefill + (1−share)/decode).
func (t Throughput) MixedTokensPerSec(inputShare float64) float64 {
	if t.DecodeTokensPerSec <= 0 || t.PrefillTokensPerSec <= 0 {
		return 0
	}
	inputShare = math.Min(math.Max(inputShare, 0), 1)
	return 1 / (inputShare/t.PrefillTokensPerSec + (1-inputShare)/t.DecodeTokensPerSec)
}

// inferenceMemory returns (fixed bytes, KV bytes per sequence) for serving m in precision p with
// seqLen tokens of context per sequence.
func inferenceMemory(m Model, p Precision, seqLen int, a Assumptions) (fixed, kvSeq float64) {
	return a.InferenceMemoryOverhead * m.Params * p.BytesPerParam(), m.KVBytesPerToken(p.kvBytesPerValue()) * float64(seqLen)
}

// EstimateThroughput applies the decode model to one replica of m on gpus GPUs of type g, with
// seqLen tokens of context per sequence (every sequence is assumed to hold its full context — the
// conservative end) and at most maxBatch sequences (0 = as many as memory allows). It returns an
// error naming the memory shortfall when even one sequence does not fit.
func EstimateThroughput(m Model, p Precision, g GPU, gpus int, seqLen, maxBatch int, a Assumptions) (Throughput, error) {
	if gpus < 1 {
		return Throughput{}, fmt.Errorf("need at least one GPU")
	}
	fixed, kvSeq := inferenceMemory(m, p, seqLen, a)
	avail := float64(gpus) * a.UsableBytes(g)
	t := Throughput{MemoryAvailableGB: round1(avail / GB)}
	if fixed+kvSeq > avail {
		return t, &memoryError{need: fixed + kvSeq, have: avail}
	}
	t.MaxBatch = int(math.Min((avail-fixed)/kvSeq, 1e6))
	b := t.MaxBatch
	if maxBatch > 0 && maxBatch < b {
		b = maxBatch
	}
	t.Batch = b
	t.MemoryNeededGB = round1((fixed + float64(b)*kvSeq) / GB)
	w := m.Params * p.BytesPerParam()
	bw := a.Eta * float64(gpus) * g.BandwidthGBs * GB * float64(b) / (w + float64(b)*kvSeq)
	compute := float64(gpus) * g.PeakTFLOPS(g.computePrecision(p)) * 1e12 * a.InferenceMFU / (2 * m.ActiveParams)
	t.DecodeTokensPerSec = math.Min(bw, compute)
	t.BandwidthBound = bw < compute
	t.PrefillTokensPerSec = compute
	return t, nil
}

// memoryError is a "needs X GB, Y GB available" shortfall.
type memoryError struct {
	need, have float64
	suffix     string
}

// Error reads like "needs 131.4 GB, 80 GB available".
func (e *memoryError) Error() string {
	return fmt.Sprintf("needs %s GB, %s GB available%s", fmtGB(e.need), fmtGB(e.have), e.suffix)
}

func fmtGB(bytes float64) string {
	v := bytes / GB
	if math.Abs(v-math.Round(v)) < 0.05 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }
