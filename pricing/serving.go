package pricing

import (
	"fmt"
	"math"
)

// Serving with a latency target (docs/advisor.md, "Serving"): prefill and
// decode modelled apart, the KV cache sized for the sequences in flight,
// and each configuration's time to first token and time per output token
// at a percentile under the load.

// Serving defaults: the latency target and the traffic shape a request that
// names none gets.
const (
	DefaultTTFTMs          = 2000
	DefaultTPOTMs          = 50
	DefaultPercentile      = 90
	DefaultPromptTokens    = 1024
	DefaultOutputTokens    = 256
	servingFixedPointSteps = 30
)

// ServingLoad is the traffic and the target one serving configuration is
// judged against.
type ServingLoad struct {
	// RequestsPerSec is the arrival rate; 0 when the load is a concurrency.
	RequestsPerSec float64 `json:"requests_per_s,omitempty"`
	// Concurrency is the requests in flight (users waiting on an answer)
	// when RequestsPerSec is 0.
	Concurrency  int `json:"concurrency,omitempty"`
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// TTFTMs and TPOTMs are the targets at Percentile (e.g. 90).
	TTFTMs     float64 `json:"ttft_ms"`
	TPOTMs     float64 `json:"tpot_ms"`
	Percentile float64 `json:"latency_percentile"`
}

// ServingEstimate is what one configuration does under a load.
type ServingEstimate struct {
	// Replicas of GPUs GPUs each.
	Replicas, GPUs int
	// Batch is the sequences one replica decodes at once; MaxBatch the most
	// whose KV cache fits next to the weights.
	Batch, MaxBatch int
	// PrefillMs is one prompt's prefill; DecodeStepMs one decode step at Batch.
	PrefillMs, DecodeStepMs float64
	// PrefillBusy is the share of a replica's time spent on prefills (ρ).
	PrefillBusy float64
	// TTFTMs and TPOTMs are at the load's percentile.
	TTFTMs, TPOTMs float64
	// RequestsPerSec and OutputTokensPerSec are the load served (all replicas).
	RequestsPerSec, OutputTokensPerSec float64
	// MemoryNeededBytes and MemoryAvailableBytes are per replica.
	MemoryNeededBytes, MemoryAvailableBytes float64
	// BandwidthBound says decode is limited by memory bandwidth.
	BandwidthBound bool
	// Miss says why the target is missed ("" when met).
	Miss string
}

// zScore is the standard normal quantile of percentile p (50–99.9), by
// Abramowitz & Stegun 26.2.23 (error below 4.5e-4).
func zScore(p float64) float64 {
	q := p / 100
	if q <= 0.5 {
		return 0
	}
	t := math.Sqrt(-2 * math.Log(1-q))
	return t - (2.515517+0.802853*t+0.010328*t*t)/(1+1.432788*t+0.189269*t*t+0.001308*t*t*t)
}

// EstimateServing applies the serving model to replicas replicas of m on
// gpus GPUs of g each at precision p (docs/advisor.md, "Serving"):
//
//	decode step(B) = max((W + B·KV·(prompt + output/2)) / (η·BW), 2·N·B / (peak·inference MFU))
//	prefill S      = 2·N·prompt / (peak·inference MFU)
//	ρ              = λ·S (the share of the replica prefilling)
//	TTFT_p         = S + step + S/(1−ρ)·ln(ρ/(1−p))⁺   (M/M/1 wait at the percentile)
//	TPOT_p         = step + S·X_p/output, X_p the percentile of the prefills that arrive while a
//	                 request decodes (Poisson, mean λ·output·TPOT)
//
// with B from the concurrency, or from the rate by Little's law
// (B = λ·(TTFT + output·TPOT)).
func EstimateServing(m Model, p Precision, g GPU, gpus, replicas int, load ServingLoad, a Assumptions) (ServingEstimate, error) {
	e := ServingEstimate{Replicas: replicas, GPUs: gpus}
	perSeqMax := m.KVBytesPerToken(p.kvBytesPerValue()) * float64(load.PromptTokens+load.OutputTokens)
	perSeqAvg := m.KVBytesPerToken(p.kvBytesPerValue()) * (float64(load.PromptTokens) + float64(load.OutputTokens)/2)
	fixed := a.InferenceMemoryOverhead * m.Params * p.BytesPerParam()
	avail := float64(gpus) * a.UsableBytes(g)
	e.MemoryAvailableBytes = avail
	if fixed+perSeqMax > avail {
		return e, &memoryError{need: fixed + perSeqMax, have: avail}
	}
	e.MaxBatch = int(math.Min((avail-fixed)/perSeqMax, 1e6))
	w := m.Params * p.BytesPerParam()
	bw := a.Eta * float64(gpus) * g.BandwidthGBs * GB
	compute := float64(gpus) * g.PeakTFLOPS(g.computePrecision(p)) * 1e12 * a.InferenceMFU
	step := func(b float64) (float64, bool) {
		mem := (w + b*perSeqAvg) / bw
		cmp := 2 * m.ActiveParams * b / compute
		return math.Max(mem, cmp), mem >= cmp
	}
	s := 2 * m.ActiveParams * float64(load.PromptTokens) / compute
	e.PrefillMs = s * 1000
	out := math.Max(float64(load.OutputTokens), 1)
	z := zScore(load.Percentile)
	pq := load.Percentile / 100

	// λ per replica, and the batch: given, or by Little's law from the rate.
	lambda := load.RequestsPerSec / float64(replicas)
	batch := 1.0
	closed := load.RequestsPerSec == 0
	if closed {
		batch = math.Max(math.Ceil(float64(load.Concurrency)/float64(replicas)), 1)
	}
	var ttft, tpot, tpotMean, st float64
	for i := 0; i < servingFixedPointSteps; i++ {
		st, e.BandwidthBound = step(batch)
		if closed {
			// Each of the batch's requests takes S + step + out·step/(1−λS):
			// the λ at which they follow one another, by bisection.
			lo, hi := 0.0, 1/s
			for j := 0; j < 60; j++ {
				mid := (lo + hi) / 2
				if mid*(s+st+out*st/(1-mid*s)) < batch {
					lo = mid
				} else {
					hi = mid
				}
			}
			lambda = lo
		}
		rho := lambda * s
		if rho >= 1 {
			e.PrefillBusy = rho
			e.DecodeStepMs = st * 1000
			e.Batch = int(math.Ceil(batch))
			e.Miss = fmt.Sprintf("prefill cannot keep up: %s prompts of %s tokens a second need %.0f%% of each replica", fmtRate(lambda), fmtInt(float64(load.PromptTokens)), rho*100)
			return e, nil
		}
		tpotMean = st / (1 - rho)
		wait := 0.0
		if rho > 1-pq {
			wait = s / (1 - rho) * math.Log(rho/(1-pq))
		}
		ttft = s + st + wait
		mPrefills := lambda * out * tpotMean
		tpot = st + s*(mPrefills+z*math.Sqrt(mPrefills))/out
		if closed {
			break
		}
		next := math.Max(lambda*(ttft+out*tpotMean), 1)
		if math.Abs(next-batch) < 1e-3 {
			batch = next
			break
		}
		batch = next
	}
	st, e.BandwidthBound = step(batch)
	e.Batch = int(math.Ceil(batch))
	e.DecodeStepMs = st * 1000
	e.PrefillBusy = lambda * s
	e.TTFTMs, e.TPOTMs = ttft*1000, tpot*1000
	e.RequestsPerSec = lambda * float64(replicas)
	e.OutputTokensPerSec = e.RequestsPerSec * float64(load.OutputTokens)
	e.MemoryNeededBytes = fixed + float64(e.Batch)*perSeqMax
	users := fmt.Sprintf("%s users", fmtInt(float64(load.Concurrency)))
	if load.RequestsPerSec > 0 {
		users = fmt.Sprintf("%s req/s", fmtRate(load.RequestsPerSec))
	}
	switch {
	case e.Batch > e.MaxBatch:
		e.Miss = fmt.Sprintf("KV cache holds %s sequences of %s tokens per replica, %s needed at %s", fmtInt(float64(e.MaxBatch)),
			fmtInt(float64(load.PromptTokens+load.OutputTokens)), fmtInt(float64(e.Batch)), users)
	case load.TPOTMs > 0 && e.TPOTMs > load.TPOTMs:
		e.Miss = fmt.Sprintf("TPOT %s ms > %s ms at %s", fmtMs(e.TPOTMs), fmtMs(load.TPOTMs), users)
		if floor, _ := step(1); floor*1000 > load.TPOTMs {
			e.Miss += fmt.Sprintf(" (%s ms even at batch 1: the weights' %s GB over %s GB/s)", fmtMs(floor*1000), fmtGB(w), fmtInt(bw/GB))
		}
	case load.TTFTMs > 0 && e.TTFTMs > load.TTFTMs:
		e.Miss = fmt.Sprintf("TTFT %s ms > %s ms at %s", fmtMs(e.TTFTMs), fmtMs(load.TTFTMs), users)
	}
	return e, nil
}

func fmtMs(ms float64) string {
	if ms >= 100 {
		return fmtInt(ms)
	}
	return fmt.Sprintf("%.1f", ms)
}

func fmtRate(v float64) string {
	if v >= 100 {
		return fmtInt(v)
	}
	return fmt.Sprintf("%.3g", v)
}

// target is the latency target and load in words: "TTFT ≤ 2,000 ms and
// TPOT ≤ 50 ms at p90 for 64 users (1,024-token prompts, 256-token answers)".
func (l ServingLoad) target() string {
	users := fmt.Sprintf("%s users", fmtInt(float64(l.Concurrency)))
	if l.RequestsPerSec > 0 {
		users = fmt.Sprintf("%s req/s", fmtRate(l.RequestsPerSec))
	}
	return fmt.Sprintf("TTFT ≤ %s ms and TPOT ≤ %s ms at p%g for %s (%s-token prompts, %s-token answers)",
		fmtInt(l.TTFTMs), fmtMs(l.TPOTMs), l.Percentile, users, fmtInt(float64(l.PromptTokens)), fmtInt(float64(l.OutputTokens)))
}
