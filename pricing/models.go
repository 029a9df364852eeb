package pricing

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Model describes an open-weights transformer well enough to size its memory and FLOPs.
type Model struct {
	// Name is the canonical name, e.g. "llama-3.1-8b".
	Name string `json:"name"`
	// Params is the total parameter count (all experts for MoE); it sizes memory.
	Params float64 `json:"params"`
	// ActiveParams is the parameter count used per token (MoE: shared + routed experts); it sizes FLOPs.
	ActiveParams float64 `json:"active_params"`
	// Layers is the number of transformer blocks.
	Layers int `json:"layers"`
	// Hidden is the model (residual stream) width.
	Hidden int `json:"hidden"`
	// Heads is the number of attention (query) heads.
	Heads int `json:"heads"`
	// KVHeads is the number of key/value heads (grouped-query attention; equals Heads without GQA).
	KVHeads int `json:"kv_heads"`
	// HeadDim is the per-head dimension.
	HeadDim int `json:"head_dim"`
	// KVLatentDim, when non-zero, is the per-layer width of a multi-head latent attention (MLA) cache
	// (DeepSeek-V3: 512 compressed KV + 64 decoupled RoPE key = 576 values per token per layer, cached
	// once, not as separate K and V); it replaces 2·KVHeads·HeadDim in the KV-cache formula.
	KVLatentDim int `json:"kv_latent_dim,omitempty"`
	// FFN is the MLP's intermediate width (0: assumed 3.5 × Hidden); Experts the MLPs per layer
	// (MoE; 0 or 1 for dense). They size LoRA adapters.
	FFN     int `json:"ffn,omitempty"`
	Experts int `json:"experts,omitempty"`
	// Vocab is the vocabulary size; TiedEmbeddings says the output layer shares the input
	// embedding's weights. They size the 16-bit embeddings QLoRA does not quantise and the logits.
	Vocab          int  `json:"vocab,omitempty"`
	TiedEmbeddings bool `json:"tied_embeddings,omitempty"`
	// MoE is true for mixture-of-experts models.
	MoE bool `json:"moe"`
	// Custom is true for a model derived from a bare parameter count (see CustomModel).
	Custom bool `json:"custom,omitempty"`
	// Notes states assumptions behind the figures.
	Notes string `json:"notes,omitempty"`
}

// KVBytesPerToken is the KV-cache size of one token of one sequence:
// 2 · layers · kv_heads · head_dim · bytesPerValue (K and V), or layers · latent · bytesPerValue for MLA.
// Llama 3.1 8B at 2 bytes: 2·32·8·128·2 = 131,072 B = 128 KiB.
func (m Model) KVBytesPerToken(bytesPerValue float64) float64 {
	if m.KVLatentDim > 0 {
		return float64(m.Layers*m.KVLatentDim) * bytesPerValue
	}
	return 2 * float64(m.Layers*m.KVHeads*m.HeadDim) * bytesPerValue
}

// The open models the advisor knows by name; architecture figures from each model's config.json.
var knownModels = []Model{
	vocab(dense("llama-3.2-1b", 1.24e9, 16, 2048, 32, 8, 64, 8192), 128256, true),
	vocab(dense("llama-3.2-3b", 3.21e9, 28, 3072, 24, 8, 128, 8192), 128256, true),
	vocab(dense("llama-3.1-8b", 8.03e9, 32, 4096, 32, 8, 128, 14336), 128256, false),
	vocab(dense("llama-3.1-70b", 70.6e9, 80, 8192, 64, 8, 128, 28672), 128256, false),
	vocab(dense("llama-3.3-70b", 70.6e9, 80, 8192, 64, 8, 128, 28672), 128256, false),
	vocab(dense("llama-3.1-405b", 405.9e9, 126, 16384, 128, 8, 128, 53248), 128256, false),
	vocab(dense("mistral-7b", 7.25e9, 32, 4096, 32, 8, 128, 14336), 32768, false),
	{Name: "mixtral-8x7b", Params: 46.7e9, ActiveParams: 12.9e9, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Experts: 8, MoE: true, Vocab: 32000,
		Notes: "MoE: 8 experts, 2 active per token; memory from 46.7B total, FLOPs from 12.9B active"},
	vocab(dense("qwen2.5-7b", 7.62e9, 28, 3584, 28, 4, 128, 18944), 152064, false),
	vocab(dense("qwen2.5-72b", 72.7e9, 80, 8192, 64, 8, 128, 29568), 152064, false),
	vocab(dense("qwen3-32b", 32.8e9, 64, 5120, 64, 8, 128, 25600), 151936, false),
	vocab(dense("gemma-2-9b", 9.24e9, 42, 3584, 16, 8, 256, 14336), 256000, true),
	vocab(dense("gemma-2-27b", 27.2e9, 46, 4608, 32, 16, 128, 36864), 256000, true),
	{Name: "deepseek-v3", Params: 671e9, ActiveParams: 37e9, Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 128, KVLatentDim: 576, FFN: 2048, Experts: 257, MoE: true, Vocab: 129280,
		Notes: "MoE: 671B total, 37B active per token; MLA KV cache assumed at 576 values (512 latent + 64 RoPE key) per token per layer, i.e. 70 KB/token in bf16; multi-token-prediction head ignored"},
}

func dense(name string, params float64, layers, hidden, heads, kvHeads, headDim, ffn int) Model {
	return Model{Name: name, Params: params, ActiveParams: params, Layers: layers, Hidden: hidden,
		Heads: heads, KVHeads: kvHeads, HeadDim: headDim, FFN: ffn}
}

func vocab(m Model, v int, tied bool) Model {
	m.Vocab, m.TiedEmbeddings = v, tied
	return m
}

// customVocab is the vocabulary a model given by its parameter count is
// assumed to have: LLaMA's and Llama 2's 32,000.
const customVocab = 32000

// EmbeddingParams is the parameters of the input embedding and, unless
// tied, the output layer: vocab · hidden each.
func (m Model) EmbeddingParams() float64 {
	e := float64(m.Vocab) * float64(m.Hidden)
	if !m.TiedEmbeddings {
		e *= 2
	}
	return math.Min(e, m.Params)
}

// LoRAParams is the trainable parameters of rank-r LoRA adapters on every
// attention (q, k, v, o) and MLP (gate, up, down, per expert) projection:
// r · (in + out) each. Llama 3.1 70B at rank 16: 207M, 0.29% of the base.
func (m Model) LoRAParams(rank float64) float64 {
	h, q, kv := float64(m.Hidden), float64(m.Heads*m.HeadDim), float64(m.KVHeads*m.HeadDim)
	ffn := float64(m.FFN)
	if ffn == 0 {
		ffn = 3.5 * h
	}
	experts := float64(max(m.Experts, 1))
	perLayer := (h + q) + 2*(h+kv) + (q + h) + experts*3*(h+ffn)
	return rank * perLayer * float64(m.Layers)
}

// modelAliases maps folded alias keys (modelKey) to canonical names.
var modelAliases = map[string]string{
	"llama3.18b": "llama-3.1-8b", "llama38b": "llama-3.1-8b", "llama3.28b": "llama-3.1-8b",
	"llama3.170b": "llama-3.1-70b", "llama370b": "llama-3.1-70b", "llama3.370b": "llama-3.3-70b",
	"llama3.1405b": "llama-3.1-405b", "llama3.21b": "llama-3.2-1b", "llama3.23b": "llama-3.2-3b",
	"mistral7b": "mistral-7b", "mistral7bv0.1": "mistral-7b", "mistral7bv0.2": "mistral-7b", "mistral7bv0.3": "mistral-7b",
	"mixtral8x7b": "mixtral-8x7b", "mixtral8x7bv0.1": "mixtral-8x7b",
	"qwen2.57b": "qwen2.5-7b", "qwen2.572b": "qwen2.5-72b", "qwen332b": "qwen3-32b", "qwen3vl32b": "qwen3-32b",
	"gemma29b": "gemma-2-9b", "gemma227b": "gemma-2-27b",
	"deepseekv3": "deepseek-v3", "deepseekv30324": "deepseek-v3", "deepseekchat": "deepseek-v3",
}

// modelKey folds a model spelling: lower case, organisation prefix ("meta-llama/") and
// instruction-tuning suffixes dropped, separators removed, dots kept ("llama-3.1-8b" → "llama3.18b").
func modelKey(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimPrefix(s, "meta-")
	for _, suf := range []string{"-instruct", "-chat", "-it", "-hf", "-base"} {
		s = strings.Replace(s, suf, "", 1)
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// LookupModel finds a known open model by name or a common alias ("meta-llama/Llama-3.1-8B-Instruct",
// "llama3.1-8b", "Mixtral-8x7B-Instruct-v0.1"). The error lists the known names.
func LookupModel(name string) (Model, error) {
	k := modelKey(name)
	for _, m := range knownModels {
		if modelKey(m.Name) == k {
			return m, nil
		}
	}
	if canon, ok := modelAliases[k]; ok {
		for _, m := range knownModels {
			if m.Name == canon {
				return m, nil
			}
		}
	}
	return Model{}, fmt.Errorf("unknown model %q; known models: %s (or give a parameter count)", name, strings.Join(ModelNames(), ", "))
}

// Models returns the known open models.
func Models() []Model { return append([]Model(nil), knownModels...) }

// ModelNames returns the canonical names of the known open models, sorted.
func ModelNames() []string {
	out := make([]string, len(knownModels))
	for i, m := range knownModels {
		out[i] = m.Name
	}
	sort.Strings(out)
	return out
}

// CustomModel derives a plausible dense architecture from a parameter count, for sizing only:
// a Llama-like decoder with N ≈ 12·L·h² and width/depth h ≈ 128·L (as Llama 3 8B/405B), h rounded
// to a multiple of 128, head_dim 128, and grouped-query attention with 8 KV heads (fewer when the
// model has fewer heads). The assumption is stated in Notes.
func CustomModel(params float64) (Model, error) {
	if !(params >= 1e6) || math.IsInf(params, 0) {
		return Model{}, fmt.Errorf("parameter count %g is not a positive count of at least 1e6", params)
	}
	layers := int(math.Round(math.Cbrt(params / (12 * 128 * 128))))
	layers = max(layers, 2)
	hidden := math.Sqrt(params / (12 * float64(layers)))
	h := max(int(math.Round(hidden/128))*128, 128)
	heads := h / 128
	kv := min(8, heads)
	return Model{
		Name: fmt.Sprintf("custom-%s", HumanCount(params)), Params: params, ActiveParams: params,
		Layers: layers, Hidden: h, Heads: heads, KVHeads: kv, HeadDim: 128, Custom: true, Vocab: customVocab,
		Notes: fmt.Sprintf("assumed Llama-like dense architecture: %d layers, hidden %d, %d heads of 128, %d KV heads (GQA), a %s-token vocabulary", layers, h, heads, kv, fmtInt(customVocab)),
	}, nil
}

// HumanCount formats a count the way people write one: 8.03e9 as "8.03B",
// 1.2e12 as "1.2T", 12000 as "12k".
func HumanCount(n float64) string {
	switch {
	case n >= 1e12:
		return trimFloat(n/1e12) + "T"
	case n >= 1e9:
		return trimFloat(n/1e9) + "B"
	case n >= 1e6:
		return trimFloat(n/1e6) + "M"
	case n >= 1e3:
		return trimFloat(n/1e3) + "k"
	}
	return trimFloat(n)
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3g", f)
	if strings.ContainsAny(s, "e") {
		s = fmt.Sprintf("%.0f", f)
	}
	return s
}
