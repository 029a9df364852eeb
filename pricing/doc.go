// Package pricing is Burnrate's pure computation over prices: the GPU catalog, the LLM API price
// table, the GPU advisor and the API-vs-self-host break-even model (docs/advisor.md).
//
// It imports only the standard library, github.com/shopspring/decimal and the quantity parser
// (for uploaded price lists), and does no I/O at run time: its data is embedded with //go:embed
// (pricing/data; provenance in docs/advisor.md, "Sources") and parsed on first use. Every value is immutable after construction and safe for concurrent use.
//
// # Data
//
//   - DefaultCatalog: gpu_specs.csv (21 GPUs) and gpu_prices.csv (286 instance types, cheapest
//     region each), with GPUSpecsSource, GPUPricesSource and GPUPricesAsOf for the UI and a source
//     per row. NormalizeGPU folds provider spellings ("NVIDIA H100 80GB HBM3", "RTX A6000") to the
//     spec names. (*Catalog).InstanceGPU maps instance types to GPU × count for ingestion, with a
//     family fallback documented on familyRule (any p4d.*, GCP a2-highgpu-Ng, Azure NC*ads_A100_v4…).
//   - DefaultLLMPrices: llm_prices.csv (99 chat models, USD per 1M tokens), falling back to the
//     full embedded LiteLLM table (about 2,300 chat models, including batch prices) for names the
//     curated table lacks. Lookup folds provider prefixes, dated snapshots, "-latest" and version
//     dots.
//   - Per-org prices: ParseInstancePricesCSV + (*Catalog).WithPrices for negotiated GPU rates and
//     for the effective $/instance-hour learned from an org's own bills; ParseLLMPricesCSV +
//     (*LLMPriceTable).WithOverrides for negotiated API prices. Overrides always win and are
//     labelled with their source.
//
// Data-quality rules (docs/advisor.md, "Instance prices") applied to the embedded catalog: every GCP a2/a3/a4 row is
// Suspicious (flagged low-tier SKUs and the unflagged tiers that are likely the same) and the
// advisor excludes suspicious rows unless AdviceRequest.IncludeSuspicious is set, in which case
// the option's reason says "price flagged as suspicious"; a spot price not below on-demand (Azure
// ND96isr_H200_v5) is dropped as a placeholder; rows without an on-demand price (AWS p5e) are
// offered only as spot; fractional GPU slices (Azure NV*_A10_v5) and GPUs without specifications
// are listed but never advised; RunPod's swapped L40S columns arrive corrected and flagged.
//
// # Money and JSON
//
// Money is decimal.Decimal, never float64. decimal marshals as a JSON string ("2182.7"), as every
// amount in Burnrate's API does; physical estimates (hours, FLOPs, tokens/s, GB) are float64 JSON
// numbers. Advice and BreakEvenResult carry exactly the field names of docs/advisor.md ("Advisor output", "Break-even output") (`burnrate advise
// --json`, `burnrate breakeven --json`); Advice adds "summary" and BreakEvenResult adds "models" and
// "self_host". Fields tagged json:"-" are extra detail for Go callers.
//
// # Advisor model (Advise)
//
// For each instance type (all GPUs of one machine, tensor/data parallel within it):
//
//   - Training and full fine-tuning: 16 B/param of mixed-precision AdamW state sharded over all GPUs
//     (ZeRO-3/FSDP) plus activations per GPU of 34·s·b·h·L bytes (selective recompute, micro-batch
//     1). LoRA: weight bytes × N + adapters × 16 B + full-recompute activations; QLoRA a 4.127-bit
//     NF4 base with 16-bit embeddings and bf16 adapters. Time (EstimateTrainingTime): matmul FLOPs
//     (6·N, 4·N for LoRA) at the GPU generation's calibrated fraction of peak, attention FLOPs
//     12·L·s·d at 0.4 of that rate, FSDP and tensor-parallel traffic over the links, a per-step
//     overhead and restarts after hardware failures. Several nodes only for 8-GPU NVLink-class
//     machines, when memory or a deadline needs them; a fit only within the memory headroom is
//     listed as tight.
//   - Inference: weight bytes + KV cache (2·layers·kv_heads·head_dim·2 bytes per token per
//     sequence, MLA latent for DeepSeek-V3) with every sequence at its full context; decode
//     tokens/s per replica = min(η·BW·B/(W + B·KV_seq), peak·MFU/(2·N_active)); prefill is
//     compute-bound. Batch inference hours = prompt/prefill + generated/decode. Serving
//     (EstimateServing) adds replicas until the KV cache holds the load and the TTFT and TPOT
//     targets hold at their percentile; the options that miss them are listed apart, with why.
//   - Spot: wall time × (1 + λ·(restart + interval/2) + write/interval) (serving: 1 + λ·restart),
//     considered only when AdviceRequest.Spot is set.
//
// Options are ranked by the cost of the whole job, then by hours. Every constant lives in
// Assumptions (DefaultAssumptions) and is echoed in the result.
//
// # Break-even model (BreakEven)
//
// API cost = tokens × the blended price of the org's input/cached/output mix. Self-host cost =
// whole replicas × GPUs per replica × $/GPU-hour × 730 + fixed overhead, with replicas sized so
// the peak hour (PeakFactor × the average rate) keeps each GPU at most Utilization busy. The
// break-even volume is found segment by segment on that step function; it is nil with a reason
// when the API is cheaper per token than the GPU even fully used. Throughput per GPU comes from
// the advisor's model for the chosen open model and GPU (a 3:1-style mix of prefill and decode),
// or from a measured figure; the GPU and price come from the request or, when none is given, from
// the catalog instance that serves the current volume most cheaply.
package pricing
