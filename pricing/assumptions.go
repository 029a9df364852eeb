package pricing

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// JobType is the kind of GPU job the advisor sizes.
type JobType string

// The job types the advisor sizes (docs/advisor.md, "Advisor inputs"); the string values are the CLI's --job values.
const (
	JobTraining       JobType = "training"        // pre-training: 6·N·D FLOPs, 16 B/param states
	JobFullFinetune   JobType = "full-finetune"   // same math as training, usually fewer tokens
	JobLoRA           JobType = "lora"            // frozen 16-bit base + small adapters: 4·N·D FLOPs
	JobQLoRA          JobType = "qlora"           // frozen 4-bit base + adapters: 4·N·D FLOPs
	JobBatchInference JobType = "batch-inference" // process a fixed number of tokens
	JobServing        JobType = "serving"         // sustain a concurrency / tokens-per-second target
)

// JobTypes lists the valid job types in display order.
var JobTypes = []JobType{JobTraining, JobFullFinetune, JobLoRA, JobQLoRA, JobBatchInference, JobServing}

// IsTraining reports whether the job updates weights (training, fine-tuning, LoRA, QLoRA).
func (j JobType) IsTraining() bool {
	return j == JobTraining || j == JobFullFinetune || j == JobLoRA || j == JobQLoRA
}

// ParseJobType validates a --job value.
func ParseJobType(s string) (JobType, error) {
	for _, j := range JobTypes {
		if strings.EqualFold(strings.TrimSpace(s), string(j)) {
			return j, nil
		}
	}
	names := make([]string, len(JobTypes))
	for i, j := range JobTypes {
		names[i] = string(j)
	}
	return "", fmt.Errorf("unknown job type %q; use one of %s", s, strings.Join(names, ", "))
}

// Precision is the numeric format of the model weights (and of compute, see GPU.PeakTFLOPS).
type Precision string

// The weight precisions (docs/advisor.md, "Advisor inputs").
const (
	FP32 Precision = "fp32"
	BF16 Precision = "bf16"
	FP16 Precision = "fp16"
	FP8  Precision = "fp8"
	INT8 Precision = "int8"
	INT4 Precision = "int4"
)

// ParsePrecision validates a --precision value; empty means bf16.
func ParsePrecision(s string) (Precision, error) {
	switch p := Precision(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return BF16, nil
	case FP32, BF16, FP16, FP8, INT8, INT4:
		return p, nil
	}
	return "", fmt.Errorf("unknown precision %q; use fp32, bf16, fp16, fp8, int8 or int4", s)
}

// BytesPerParam is the weight size: 4, 2, 2, 1, 1, 0.5 bytes.
func (p Precision) BytesPerParam() float64 {
	switch p {
	case FP32:
		return 4
	case FP8, INT8:
		return 1
	case INT4:
		return 0.5
	}
	return 2
}

// kvBytesPerValue is the KV-cache element size: 16-bit for every weight format (KV caches are
// rarely quantised with the weights) except fp32.
func (p Precision) kvBytesPerValue() float64 {
	if p == FP32 {
		return 4
	}
	return 2
}

// Activation recomputation strategies for training memory (Korthikanti et al. 2022, per layer,
// 16-bit activations, s = sequence length, b = micro-batch, h = hidden, a = heads).
const (
	RecomputeNone      = "none"      // s·b·h·(34 + 5·a·s/h) bytes per layer
	RecomputeSelective = "selective" // 34·s·b·h bytes per layer (default for training and full fine-tuning)
	RecomputeFull      = "full"      // 2·s·b·h bytes per layer (default for LoRA/QLoRA: gradient checkpointing)
)

// Assumptions are the editable constants of the advisor and break-even models. Start from
// DefaultAssumptions and change fields; a zero Assumptions value in a request means "all defaults".
// (JSON callers: unmarshal onto DefaultAssumptions() so omitted fields keep their defaults.)
type Assumptions struct {
	// MFU, when positive, is the achievable fraction of the GPU's dense peak that training matmuls
	// run at, for every GPU; 0 (the default) takes the figure calibrated per GPU generation
	// (Assumptions.MatmulFraction, docs/advisor.md "Training time").
	MFU float64 `json:"mfu"`
	// AttentionEfficiency is the rate of attention FLOPs relative to the matmuls' (default 0.4:
	// FlashAttention's share of a step grows with the sequence length faster than its FLOPs).
	AttentionEfficiency float64 `json:"attention_efficiency"`
	// GlobalBatchTokens is the tokens of one optimizer step across all GPUs (default 4M, as Llama 2
	// and the start of Llama 3); each data-parallel rank gets its share, at least one sequence.
	GlobalBatchTokens float64 `json:"global_batch_tokens"`
	// StepOverheadSeconds is the time of one optimizer step not spent in matmuls or hidden
	// communication: the optimizer update, synchronisation, logging (default 0.1 s).
	StepOverheadSeconds float64 `json:"step_overhead_s"`
	// GPUFailuresPerHour is λ_fail, hardware failures that restart a synchronous job, per GPU-hour
	// (default 1.97e-5: 419 unexpected interruptions in 54 days on 16,384 H100s, The Llama 3 Herd
	// of Models §3.3.4); each costs RestartHours and half a CheckpointIntervalHours.
	GPUFailuresPerHour float64 `json:"gpu_failures_per_hour"`
	// InferenceMFU is the model-FLOPs utilisation of compute-bound inference: prefill and large-batch
	// decode (default 0.2, calibrated on published vLLM/SGLang serving benchmarks, docs/advisor.md).
	InferenceMFU float64 `json:"inference_mfu"`
	// MemoryFraction is the share of each GPU's memory a job may plan to fill (default 0.9, as
	// vLLM's gpu_memory_utilization): headroom for fragmentation and peaks.
	MemoryFraction float64 `json:"memory_fraction"`
	// RuntimeReserveGB is the memory per GPU taken before the model loads: the CUDA context and the
	// engine's workspace (default 1 GB).
	RuntimeReserveGB float64 `json:"runtime_reserve_gb"`
	// Eta is the achievable fraction of memory bandwidth in decode (default 0.7).
	Eta float64 `json:"eta"`
	// TrainingFLOPsFactor is C/(N·D) for full training: 6 (2 forward + 4 backward).
	TrainingFLOPsFactor float64 `json:"training_flops_factor"`
	// LoRAFLOPsFactor is C/(N·D) for LoRA/QLoRA: 4 (no weight gradients for the frozen base).
	LoRAFLOPsFactor float64 `json:"lora_flops_factor"`
	// TrainingBytesPerParam is the mixed-precision AdamW state: 2 weights + 2 grads + 12 optimizer = 16.
	TrainingBytesPerParam float64 `json:"training_bytes_per_param"`
	// QLoRABytesPerParam is the 4-bit NF4 base with double-quantised constants: 4 bits + 8/64 +
	// 32/(64·256) bits = 4.127 bits, 0.516 bytes (QLoRA paper §3); the embeddings stay 16-bit.
	QLoRABytesPerParam float64 `json:"qlora_bytes_per_param"`
	// AdapterFraction, when positive, is trainable LoRA parameters as a fraction of the base; 0
	// (the default) counts them from LoRARank and the architecture. Each costs 16 bytes on the GPU
	// (fp32 weights, grads, AdamW); QLoRA's adapters are bf16 with bf16 gradients (4 bytes) and
	// its paged optimizer keeps their AdamW state in host memory when the GPU is full.
	AdapterFraction float64 `json:"adapter_fraction"`
	// LoRARank is the adapter rank on every attention and MLP projection (default 16).
	LoRARank float64 `json:"lora_rank"`
	// ActivationRecompute is none, selective or full; empty picks selective for training and full
	// fine-tuning and full for LoRA/QLoRA.
	ActivationRecompute string `json:"activation_recompute"`
	// MicroBatch is the sequences per GPU per step whose activations are held (default 1).
	MicroBatch int `json:"micro_batch"`
	// InferenceMemoryOverhead multiplies weight bytes for runtime buffers beyond the runtime reserve
	// (default 1: the reserve and the memory fraction hold the engine's buffers).
	InferenceMemoryOverhead float64 `json:"inference_memory_overhead"`
	// SlowInterconnectMFUFactor multiplies MFU for multi-GPU training on GPUs without NVLink
	// (PCIe or a 2-way bridge): gradient/parameter traffic stalls compute (default 0.6).
	SlowInterconnectMFUFactor float64 `json:"slow_interconnect_mfu_factor"`
	// SpotInterruptionsPerHour is λ, expected preemptions per instance-hour (default 0.02, one per ~2 days).
	SpotInterruptionsPerHour float64 `json:"spot_interruptions_per_hour"`
	// RestartHours is the time to get a replacement running and reload (default 0.25 h).
	RestartHours float64 `json:"restart_hours"`
	// CheckpointIntervalHours is the time between checkpoints; half an interval is lost per preemption (default 0.5 h).
	CheckpointIntervalHours float64 `json:"checkpoint_interval_hours"`
	// CheckpointWriteHours is the time one checkpoint write stalls the job (default 2 min).
	CheckpointWriteHours float64 `json:"checkpoint_write_hours"`
	// ServingHours is the period a serving deployment is priced over (default 730 h, one month).
	ServingHours float64 `json:"serving_hours"`
}

// DefaultAssumptions returns the documented defaults (docs/advisor.md, "Assumptions").
func DefaultAssumptions() Assumptions {
	return Assumptions{
		AttentionEfficiency:       0.4,
		GlobalBatchTokens:         4e6,
		StepOverheadSeconds:       0.1,
		GPUFailuresPerHour:        419.0 / (16384 * 54 * 24),
		InferenceMFU:              0.2,
		MemoryFraction:            0.9,
		RuntimeReserveGB:          1,
		Eta:                       0.7,
		TrainingFLOPsFactor:       6,
		LoRAFLOPsFactor:           4,
		TrainingBytesPerParam:     16,
		QLoRABytesPerParam:        (4 + 8.0/64 + 32.0/(64*256)) / 8,
		LoRARank:                  16,
		MicroBatch:                1,
		InferenceMemoryOverhead:   1,
		SlowInterconnectMFUFactor: 0.6,
		SpotInterruptionsPerHour:  0.02,
		RestartHours:              0.25,
		CheckpointIntervalHours:   0.5,
		CheckpointWriteHours:      2.0 / 60,
		ServingHours:              HoursPerMonth,
	}
}

// Validate reports the first out-of-range assumption.
func (a Assumptions) Validate() error {
	var errs []error
	frac := func(name string, v float64) {
		if !(v > 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("%s must be in (0, 1], got %g", name, v))
		}
	}
	pos := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s must be positive, got %g", name, v))
		}
	}
	nonneg := func(name string, v float64) {
		if !(v >= 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %g", name, v))
		}
	}
	if !(a.MFU >= 0 && a.MFU <= 1) {
		errs = append(errs, fmt.Errorf("mfu must be in [0, 1] (0: by GPU generation), got %g", a.MFU))
	}
	frac("attention_efficiency", a.AttentionEfficiency)
	pos("global_batch_tokens", a.GlobalBatchTokens)
	nonneg("step_overhead_s", a.StepOverheadSeconds)
	nonneg("gpu_failures_per_hour", a.GPUFailuresPerHour)
	frac("inference_mfu", a.InferenceMFU)
	frac("memory_fraction", a.MemoryFraction)
	nonneg("runtime_reserve_gb", a.RuntimeReserveGB)
	pos("lora_rank", a.LoRARank)
	frac("eta", a.Eta)
	frac("slow_interconnect_mfu_factor", a.SlowInterconnectMFUFactor)
	pos("training_flops_factor", a.TrainingFLOPsFactor)
	pos("lora_flops_factor", a.LoRAFLOPsFactor)
	pos("training_bytes_per_param", a.TrainingBytesPerParam)
	pos("qlora_bytes_per_param", a.QLoRABytesPerParam)
	nonneg("adapter_fraction", a.AdapterFraction)
	if a.InferenceMemoryOverhead < 1 || math.IsNaN(a.InferenceMemoryOverhead) {
		errs = append(errs, fmt.Errorf("inference_memory_overhead must be at least 1, got %g", a.InferenceMemoryOverhead))
	}
	if a.MicroBatch < 1 {
		errs = append(errs, fmt.Errorf("micro_batch must be at least 1, got %d", a.MicroBatch))
	}
	switch a.ActivationRecompute {
	case "", RecomputeNone, RecomputeSelective, RecomputeFull:
	default:
		errs = append(errs, fmt.Errorf("activation_recompute must be none, selective or full, got %q", a.ActivationRecompute))
	}
	nonneg("spot_interruptions_per_hour", a.SpotInterruptionsPerHour)
	nonneg("restart_hours", a.RestartHours)
	pos("checkpoint_interval_hours", a.CheckpointIntervalHours)
	nonneg("checkpoint_write_hours", a.CheckpointWriteHours)
	pos("serving_hours", a.ServingHours)
	return errors.Join(errs...)
}

// SpotOverhead is the wall-clock inflation of a checkpointed job on spot capacity:
// 1 + λ·(restart + interval/2) + write/interval (docs/advisor.md, "Spot").
func (a Assumptions) SpotOverhead() float64 {
	return 1 + a.SpotInterruptionsPerHour*(a.RestartHours+a.CheckpointIntervalHours/2) +
		a.CheckpointWriteHours/a.CheckpointIntervalHours
}

// ServingSpotOverhead is the capacity inflation of a serving deployment on spot: 1 + λ·restart
// (replicas lost while a replacement starts; there is no checkpoint to write).
func (a Assumptions) ServingSpotOverhead() float64 {
	return 1 + a.SpotInterruptionsPerHour*a.RestartHours
}

// HoursPerMonth is the 730-hour month used for monthly costs.
const HoursPerMonth = 730
