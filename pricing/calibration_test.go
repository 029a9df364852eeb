package pricing

import (
	"math"
	"testing"
)

// calibrationRun is a published pre-training run the training time model
// is calibrated on (docs/advisor.md, "Calibration"): its GPU-hours as
// published, and what the advisor computes for it with its defaults.
type calibrationRun struct {
	name   string
	model  Model   // the run's architecture (Name set: a known model, sized by Advise)
	tokens float64 // pre-training tokens
	seqLen int
	batch  float64 // global batch in tokens
	gpu    string
	// gpus is the run's published GPU count, which the time model is
	// applied to; 0 when unpublished: the advisor picks the count for its
	// default 60-day deadline.
	gpus     int
	gpuHours float64 // published
	// within is the largest factor allowed between the model and the
	// published figure, either way.
	within float64
	source string
	// recompute is the activation recomputation the run needs here: Meta
	// held 405B's 8K-token activations with 16-way pipeline parallelism,
	// which the advisor does not model, so it recomputes them instead.
	recompute string
}

// arch is a dense Llama-like or GPT-like architecture for a calibration run.
func arch(name string, params float64, layers, hidden, heads, kvHeads, headDim, ffn int) Model {
	return dense(name, params, layers, hidden, heads, kvHeads, headDim, ffn)
}

func known(name string) Model {
	m, err := LookupModel(name)
	if err != nil {
		panic(err)
	}
	return m
}

// calibrationRuns lists every published run the defaults rest on, with the
// figure each publishes. Runs of 1B- to 400B-class models must land within
// 1.5× of their published GPU-hours, Llama 3.1 within 1.6×.
var calibrationRuns = []calibrationRun{
	{"TinyLlama 1.1B", arch("", 1.1e9, 22, 2048, 32, 4, 64, 5632), 3e12, 2048, 2 << 20, "A100", 16, 3e12 / 24000 / 3600, 1.5,
		"TinyLlama README and tech report (arXiv:2401.02385): 3T tokens on 16 A100-40G, 24k tokens/s per GPU (56% MFU), i.e. 34,722 GPU-hours", ""},
	{"Pythia 1B", arch("", 1.01e9, 16, 2048, 8, 8, 256, 8192), 299.9e9, 2048, 2 << 20, "A100", 0, 4830, 1.5,
		"Pythia (Biderman et al. 2023, arXiv:2304.01373), as quoted in TinyLlama's README: 4,830 A100-40GB GPU-hours for 300B tokens", ""},
	{"MPT-1.3B", arch("", 1.3e9, 24, 2048, 16, 16, 128, 8192), 200e9, 2048, 1 << 20, "A100", 440, 440 * 12, 1.5,
		"mosaicml/mpt-1b-redpajama-200b model card: 200B tokens on 440 A100-40GB for about half a day (≈5,280 GPU-hours)", ""},
	{"MPT-7B", arch("", 6.7e9, 32, 4096, 32, 32, 128, 16384), 1e12, 2048, 4 << 20, "A100", 440, 440 * 9.5 * 24, 1.5,
		"MosaicML, \"Introducing MPT-7B\" (2023): 1T tokens in 9.5 days on 440 A100-40GB (100,320 GPU-hours)", ""},
	{"LLaMA 7B", arch("", 6.7e9, 32, 4096, 32, 32, 128, 11008), 1e12, 2048, 4 << 20, "A100-80GB", 0, 82432, 1.5,
		"LLaMA (Touvron et al. 2023, arXiv:2302.13971) Table 15: 82,432 A100-80GB GPU-hours, 1.0T tokens", ""},
	{"LLaMA 13B", arch("", 13.0e9, 40, 5120, 40, 40, 128, 13824), 1e12, 2048, 4 << 20, "A100-80GB", 0, 135168, 1.5,
		"LLaMA Table 15: 135,168 GPU-hours, 1.0T tokens", ""},
	{"LLaMA 33B", arch("", 32.5e9, 60, 6656, 52, 52, 128, 17920), 1.4e12, 2048, 4 << 20, "A100-80GB", 0, 530432, 1.5,
		"LLaMA Table 15: 530,432 GPU-hours, 1.4T tokens", ""},
	{"LLaMA 65B", arch("", 65.2e9, 80, 8192, 64, 64, 128, 22016), 1.4e12, 2048, 4 << 20, "A100-80GB", 2048, 1022362, 1.5,
		"LLaMA Table 15: 1,022,362 GPU-hours, 1.4T tokens; §2.4: 2,048 A100-80GB", ""},
	{"Llama 2 7B", arch("", 6.74e9, 32, 4096, 32, 32, 128, 11008), 2e12, 4096, 4 << 20, "A100-80GB", 0, 184320, 1.5,
		"Llama 2 (arXiv:2307.09288) Table 2: 184,320 A100-80GB GPU-hours, 2T tokens, 4k context, 4M-token batch", ""},
	{"Llama 2 13B", arch("", 13.0e9, 40, 5120, 40, 40, 128, 13824), 2e12, 4096, 4 << 20, "A100-80GB", 0, 368640, 1.5,
		"Llama 2 Table 2: 368,640 GPU-hours", ""},
	{"Llama 2 70B", arch("", 69e9, 80, 8192, 64, 8, 128, 28672), 2e12, 4096, 4 << 20, "A100-80GB", 0, 1720320, 1.5,
		"Llama 2 Table 2: 1,720,320 GPU-hours", ""},
	{"BLOOM 176B", arch("", 176e9, 70, 14336, 112, 112, 128, 57344), 366e9, 2048, 2048 * 2048, "A100-80GB", 384, 1082990, 1.5,
		"BLOOM (arXiv:2211.05100): 1,082,990 compute hours on 384 A100-80GB, 366B tokens, 2,048-sequence batches of 2,048 tokens", ""},
	{"Llama 3.1 8B", known("llama-3.1-8b"), 15e12, 8192, 16 << 20, "H100", 0, 1.46e6, 1.6,
		"Llama 3.1 model card: 1.46M H100-80GB GPU-hours, 15T+ tokens; 8K sequences and a batch growing to 16M tokens (The Llama 3 Herd of Models §3.4.1)", ""},
	{"Llama 3.1 70B", known("llama-3.1-70b"), 15e12, 8192, 16 << 20, "H100", 0, 7.0e6, 1.6,
		"Llama 3.1 model card: 7.0M H100-80GB GPU-hours", ""},
	{"Llama 3.1 405B", known("llama-3.1-405b"), 15.6e12, 8192, 16 << 20, "H100", 16384, 30.84e6, 1.5,
		"Llama 3.1 model card: 30.84M GPU-hours; The Llama 3 Herd of Models: 15.6T tokens on up to 16,384 H100s, 38–43% MFU", RecomputeFull},
}

// calibratedGPUHours is what the advisor computes for run: the time model on
// the run's published GPU count at the tensor-parallel degree the advisor
// would take, or, without a published count, the advisor's own answer.
func calibratedGPUHours(t *testing.T, run calibrationRun) (gpuHours float64, gpus int, tt TrainingTime) {
	t.Helper()
	a := DefaultAssumptions()
	a.GlobalBatchTokens = run.batch
	a.ActivationRecompute = run.recompute
	g, ok := DefaultCatalog().GPU(run.gpu)
	if !ok {
		t.Fatalf("%s: no GPU %s", run.name, run.gpu)
	}
	if run.gpus == 0 {
		req := AdviceRequest{Job: JobTraining, Model: run.model.Name, Params: run.model.Params, Tokens: run.tokens,
			SeqLen: run.seqLen, GPU: run.gpu, Assumptions: a, MaxOptions: 1}
		adv := mustAdvise(t, req, nil)
		if len(adv.Options) == 0 {
			t.Fatalf("%s: no option: %s", run.name, adv.Summary)
		}
		o := adv.Options[0]
		r, _ := normalizeRequest(req, DefaultCatalog())
		tm := EstimateTrainingMemory(JobTraining, r.model, BF16, run.seqLen, a)
		s := trainingSpeed{r: r, g: g, prec: BF16, perNode: o.GPUsPerInstance, tm: tm, tps: tensorParallelDegrees(g, o.GPUsPerInstance), usable: a.UsableBytes(g)}
		return o.GPUHours, o.GPUs, s.time(o.Instances, s.fastestTensorParallel(o.Instances))
	}
	r := &request{AdviceRequest: AdviceRequest{Job: JobTraining, Tokens: run.tokens, SeqLen: run.seqLen}, model: run.model, a: a}
	tm := EstimateTrainingMemory(JobTraining, run.model, BF16, run.seqLen, a)
	s := trainingSpeed{r: r, g: g, prec: BF16, perNode: 8, tm: tm, tps: tensorParallelDegrees(g, 8), usable: a.UsableBytes(g)}
	k := run.gpus / 8
	tp := s.fastestTensorParallel(k)
	if tp == 0 {
		t.Fatalf("%s: does not fit %d GPUs", run.name, run.gpus)
	}
	tt = s.time(k, tp)
	return tt.Hours * float64(run.gpus), run.gpus, tt
}

// TestCalibrationAgainstPublishedRuns sizes every published run with the
// defaults and checks its GPU-hours against the published figure, within
// the run's factor.
func TestCalibrationAgainstPublishedRuns(t *testing.T) {
	t.Parallel()
	for _, run := range calibrationRuns {
		got, gpus, tt := calibratedGPUHours(t, run)
		factor := got / run.gpuHours
		t.Logf("%-15s %-9s %6d GPUs  published %11s GPU-h  model %11s GPU-h  factor %.2f  (MFU %.2f, busy %.0f%%)", run.name, run.gpu, gpus,
			fmtInt(run.gpuHours), fmtInt(got), factor, tt.MFU, tt.Busy*100)
		if math.IsNaN(factor) || factor > run.within || factor < 1/run.within {
			t.Errorf("%s: model %.0f GPU-hours vs published %.0f: factor %.2f, want within %.1f× (%s)", run.name, got, run.gpuHours, factor, run.within, run.source)
		}
	}
}
