package ingest

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/pricing"
)

// This file holds the LLM usage and cost sources: OpenAI usage and costs
// exports, Anthropic usage and cost reports, LiteLLM spend logs and daily
// spend tables, and the OpenRouter activity export.

const aiCategory = "AI and Machine Learning"

// anthropicWebSearchUSD is Anthropic's published price of one server-side
// web search ($10 per 1,000 searches).
var anthropicWebSearchUSD = decimal.New(1, -2)

// Both OpenAI's Batch API and Anthropic's Message Batches bill half the
// standard token price.
var batchDiscount = decimal.New(5, -1)

// llmRow sets the fields every LLM row shares.
func llmRow(row *Row, provider string, start, end time.Time) {
	row.ProviderName = provider
	row.ServiceCategory = aiCategory
	row.ChargeCategory = ChargeUsage
	row.BillingCurrency = "USD"
	row.ChargePeriodStart = start
	row.ChargePeriodEnd = end
	row.BillingPeriodStart = monthStart(start)
	row.ConsumedUnit = "Tokens"
}

func setCost(row *Row, cost decimal.Decimal) {
	row.BilledCost, row.EffectiveCost, row.ListCost = cost, cost, cost
}

func needPricer(o *Options, src Source) error {
	if o.Pricer == nil {
		return &ParseError{Err: ErrNoPricer, Msg: string(src) + " files carry no cost; they are priced with the LLM price table"}
	}
	return nil
}

func requireCols(src Source, h *header, cols ...[]string) error {
	for _, alts := range cols {
		if !h.has(alts...) {
			return &ParseError{Err: ErrMissingColumn, Msg: strings.Join(alts, " or ") + " (needed by " + string(src) + ")"}
		}
		h.need(h.col(alts...))
	}
	return nil
}

// joinKey builds a dedupe key from parts (| is rare in ids and models).
func joinKey(parts ...string) string { return strings.Join(parts, "|") }

// period reads a bucket's start and end from either Unix or ISO columns.
func period(c *rowCtx, startCols, endCols []int) (time.Time, time.Time, error) {
	var start, end time.Time
	var err error
	for _, i := range startCols {
		if c.text(i) != "" {
			if start, err = c.time(i); err != nil {
				return start, end, err
			}
			break
		}
	}
	if start.IsZero() {
		return start, end, c.errAt(startCols[0], ErrEmptyValue, "a date is required")
	}
	for _, i := range endCols {
		if c.text(i) != "" {
			if end, err = c.time(i); err != nil {
				return start, end, err
			}
			break
		}
	}
	return start, endOrDay(start, end), nil
}

// ---- OpenAI usage (completions usage CSV) ----

type openAIUsage struct {
	opts *Options
	start, end, startISO, endISO, project, requests, user, apiKey, model, batch,
	tier, input, output, cached, uncached int
	// timeCols is how many of the header's first names are time columns:
	// the width of an empty bucket's record.
	timeCols int
}

// shortOK lets through the records of empty buckets, which the export
// writes as their leading time columns alone (parse then skips them).
func (p *openAIUsage) shortOK(n int) bool { return n > 0 && n == p.timeCols }

func newOpenAIUsage(h *header, o *Options) (parser, error) {
	if err := requireCols(SourceOpenAIUsage, h, []string{"start_time", "start_time_iso"}, []string{"input_tokens"}, []string{"output_tokens"}); err != nil {
		return nil, err
	}
	if err := needPricer(o, SourceOpenAIUsage); err != nil {
		return nil, err
	}
	timeCols := 0
	for _, n := range h.names {
		switch strings.ToLower(n) {
		case "start_time", "end_time", "start_time_iso", "end_time_iso":
			timeCols++
			continue
		}
		break
	}
	return &openAIUsage{opts: o, timeCols: timeCols,
		start: h.col("start_time"), end: h.col("end_time"), startISO: h.col("start_time_iso"), endISO: h.col("end_time_iso"),
		project: h.col("project_id"), requests: h.col("num_model_requests"), user: h.col("user_id"),
		apiKey: h.col("api_key_id"), model: h.col("model"), batch: h.col("batch"), tier: h.col("service_tier"),
		input: h.col("input_tokens"), output: h.col("output_tokens"), cached: h.col("input_cached_tokens"),
		uncached: h.col("input_uncached_tokens"),
	}, nil
}

func (p *openAIUsage) parse(c *rowCtx, row *Row) error {
	// Empty buckets export only their four time columns.
	if c.text(p.input) == "" && c.text(p.output) == "" && c.text(p.requests) == "" && c.text(p.model) == "" {
		return errSkip
	}
	start, end, err := period(c, []int{p.startISO, p.start}, []int{p.endISO, p.end})
	if err != nil {
		return err
	}
	llmRow(row, "OpenAI", start, end)
	row.ServiceName = "OpenAI API"
	if row.InputTokens, err = c.count(p.input); err != nil {
		return err
	}
	if row.OutputTokens, err = c.count(p.output); err != nil {
		return err
	}
	if row.CachedTokens, err = c.count(p.cached); err != nil {
		return err
	}
	if row.Requests, err = c.count(p.requests); err != nil {
		return err
	}
	uncached := row.InputTokens - row.CachedTokens
	if c.text(p.uncached) != "" {
		if uncached, err = c.count(p.uncached); err != nil {
			return err
		}
	}
	if uncached < 0 {
		return c.errAt(p.cached, ErrSyntax, "more cached input tokens than input tokens")
	}
	row.Model = c.text(p.model)
	row.SKU = row.Model
	row.SubAccountID = c.text(p.project)
	row.ResourceID = c.text(p.apiKey)
	row.ConsumedQuantity = decimal.NewFromInt(row.InputTokens + row.OutputTokens)
	c.tag("user_id", c.text(p.user))
	c.tag("service_tier", c.text(p.tier))
	c.tag("batch", strings.ToLower(c.text(p.batch)))
	cost, err := price(c, p.opts.Pricer, p.model, row.Model, pricing.TokenUsage{Uncached: uncached, CacheRead: row.CachedTokens, Output: row.OutputTokens})
	if err != nil {
		return err
	}
	if strings.EqualFold(c.text(p.batch), "true") {
		cost = cost.Mul(batchDiscount)
	}
	setCost(row, cost)
	row.PricedByUs = true
	row.DedupeKey = joinKey(start.Format(time.RFC3339), end.Format(time.RFC3339), row.SubAccountID, c.text(p.user),
		row.ResourceID, row.Model, c.text(p.batch), c.text(p.tier))
	return nil
}

// price asks the pricer; a model without a price fails the import.
func price(c *rowCtx, pr LLMPricer, modelCol int, model string, u pricing.TokenUsage) (decimal.Decimal, error) {
	if u.Uncached == 0 && u.CacheRead == 0 && u.CacheWrite5m == 0 && u.CacheWrite1h == 0 && u.Output == 0 {
		return decimal.Zero, nil
	}
	if model == "" {
		return decimal.Zero, c.errAt(modelCol, ErrNoModel, "")
	}
	cost, ok := pr.PriceUsage(model, u)
	if !ok {
		return decimal.Zero, c.errAt(modelCol, ErrNoPrice, "add a price override for it, or remove the rows")
	}
	return cost, nil
}

// claudeUsageCost prices a bucket of Claude usage as Anthropic bills it:
// each kind of token at its own rate, at the long-context rates above 200k
// tokens where the table has them, half of it on the batch tier, plus the
// web searches at their published price (not discounted).
func claudeUsageCost(c *rowCtx, pr LLMPricer, modelCol int, model string, u pricing.TokenUsage, batch bool, searches int64) (decimal.Decimal, error) {
	cost, err := price(c, pr, modelCol, model, u)
	if err != nil {
		return cost, err
	}
	if batch {
		cost = cost.Mul(batchDiscount)
	}
	if searches > 0 {
		cost = cost.Add(anthropicWebSearchUSD.Mul(decimal.NewFromInt(searches)))
	}
	return cost, nil
}

// longContext reports whether a usage row's context window is the one
// above 200k tokens: the Admin API writes "200k-1M", the Console "> 200k".
func longContext(window string) bool {
	w := strings.ToLower(strings.TrimSpace(window))
	return strings.HasPrefix(w, ">") || strings.HasPrefix(w, "200k-")
}

// ---- OpenAI costs ----

type openAICosts struct {
	opts                                                                   *Options
	amount, currency, lineItem, project, start, end, startISO, endISO, org int
}

func newOpenAICosts(h *header, o *Options) (parser, error) {
	p := &openAICosts{opts: o,
		amount: h.col("amount_value", "amount.value", "amount"), currency: h.col("amount_currency", "amount.currency", "currency"),
		lineItem: h.col("line_item"), project: h.col("project_id"), start: h.col("start_time", "date"), end: h.col("end_time"),
		startISO: h.col("start_time_iso"), endISO: h.col("end_time_iso"), org: h.col("organization_id"),
	}
	return p, requireCols(SourceOpenAICosts, h, []string{"amount_value", "amount.value", "amount"},
		[]string{"start_time", "start_time_iso", "date"})
}

func (p *openAICosts) parse(c *rowCtx, row *Row) error {
	if c.text(p.amount) == "" && c.text(p.lineItem) == "" {
		return errSkip // empty bucket
	}
	start, end, err := period(c, []int{p.startISO, p.start}, []int{p.endISO, p.end})
	if err != nil {
		return err
	}
	llmRow(row, "OpenAI", start, end)
	row.ServiceName = "OpenAI API"
	row.ConsumedUnit = ""
	cost, err := c.money(p.amount)
	if err != nil {
		return err
	}
	setCost(row, cost)
	if cur := strings.ToUpper(c.text(p.currency)); cur != "" {
		row.BillingCurrency = cur
	}
	row.SKU = c.text(p.lineItem)
	if m, _, ok := strings.Cut(row.SKU, ", "); ok {
		row.Model = m // "gpt-4o-2024-08-06, input"
	}
	row.SubAccountID = c.text(p.project)
	row.BillingAccountID = c.text(p.org)
	row.DedupeKey = joinKey(start.Format(time.RFC3339), row.SubAccountID, row.SKU)
	return nil
}

// ---- Anthropic usage report ----

type anthropicUsage struct {
	opts *Options
	start, end, apiKey, workspace, model, tier, window, geo, uncached, cacheRead,
	cache5m, cache1h, output, webSearch int
}

func newAnthropicUsage(h *header, o *Options) (parser, error) {
	if err := requireCols(SourceAnthropicUsage, h, []string{"starting_at"}, []string{"uncached_input_tokens"}); err != nil {
		return nil, err
	}
	if err := needPricer(o, SourceAnthropicUsage); err != nil {
		return nil, err
	}
	return &anthropicUsage{opts: o,
		start: h.col("starting_at"), end: h.col("ending_at"), apiKey: h.col("api_key_id"), workspace: h.col("workspace_id"),
		model: h.col("model"), tier: h.col("service_tier"), window: h.col("context_window"), geo: h.col("inference_geo"),
		uncached: h.col("uncached_input_tokens"), cacheRead: h.col("cache_read_input_tokens"),
		cache5m:   h.col("cache_creation.ephemeral_5m_input_tokens", "cache_creation_ephemeral_5m_input_tokens", "cache_creation_input_tokens"),
		cache1h:   h.col("cache_creation.ephemeral_1h_input_tokens", "cache_creation_ephemeral_1h_input_tokens"),
		output:    h.col("output_tokens"),
		webSearch: h.col("server_tool_use.web_search_requests", "server_tool_use_web_search_requests", "web_search_requests"),
	}, nil
}

func (p *anthropicUsage) parse(c *rowCtx, row *Row) error {
	if c.text(p.uncached) == "" && c.text(p.output) == "" && c.text(p.model) == "" {
		return errSkip // empty bucket
	}
	start, end, err := period(c, []int{p.start}, []int{p.end})
	if err != nil {
		return err
	}
	llmRow(row, "Anthropic", start, end)
	row.ServiceName = "Claude API"
	var n [6]int64
	for i, col := range []int{p.uncached, p.cacheRead, p.cache5m, p.cache1h, p.output, p.webSearch} {
		if n[i], err = c.count(col); err != nil {
			return err
		}
	}
	uncached, read, w5m, w1h, output, searches := n[0], n[1], n[2], n[3], n[4], n[5]
	row.InputTokens = uncached + read + w5m + w1h
	row.CachedTokens = read
	row.OutputTokens = output
	row.Model = c.text(p.model)
	row.SKU = row.Model
	row.SubAccountID = c.text(p.workspace)
	row.ResourceID = c.text(p.apiKey)
	row.ConsumedQuantity = decimal.NewFromInt(row.InputTokens + row.OutputTokens)
	c.tag("service_tier", c.text(p.tier))
	c.tag("context_window", c.text(p.window))

	u := pricing.TokenUsage{Uncached: uncached, CacheRead: read, CacheWrite5m: w5m, CacheWrite1h: w1h, Output: output,
		LongContext: longContext(c.text(p.window))}
	cost, err := claudeUsageCost(c, p.opts.Pricer, p.model, row.Model, u, strings.EqualFold(c.text(p.tier), "batch"), searches)
	if err != nil {
		return err
	}
	setCost(row, cost)
	row.PricedByUs = true
	row.DedupeKey = joinKey(start.Format(time.RFC3339), end.Format(time.RFC3339), row.SubAccountID, row.ResourceID,
		row.Model, c.text(p.tier), c.text(p.window), c.text(p.geo))
	return nil
}

// ---- Anthropic cost report ----

type anthropicCost struct {
	opts *Options
	start, end, amount, currency, costType, description, model, tier, window,
	tokenType, workspace, geo int
}

func newAnthropicCost(h *header, o *Options) (parser, error) {
	p := &anthropicCost{opts: o,
		start: h.col("starting_at", "date"), end: h.col("ending_at"), amount: h.col("amount"), currency: h.col("currency"),
		costType: h.col("cost_type"), description: h.col("description"), model: h.col("model"), tier: h.col("service_tier"),
		window: h.col("context_window"), tokenType: h.col("token_type"), workspace: h.col("workspace_id"), geo: h.col("inference_geo"),
	}
	return p, requireCols(SourceAnthropicCost, h, []string{"amount"}, []string{"starting_at", "date"})
}

func (p *anthropicCost) parse(c *rowCtx, row *Row) error {
	if c.text(p.amount) == "" && c.text(p.costType) == "" {
		return errSkip
	}
	start, end, err := period(c, []int{p.start}, []int{p.end})
	if err != nil {
		return err
	}
	llmRow(row, "Anthropic", start, end)
	row.ServiceName = "Claude API"
	row.ConsumedUnit = ""
	cents, err := c.money(p.amount)
	if err != nil {
		return err
	}
	setCost(row, cents.Shift(-2)) // the report's amount is in cents
	if cur := strings.ToUpper(c.text(p.currency)); cur != "" {
		row.BillingCurrency = cur
	}
	row.Model = c.text(p.model)
	row.SKU = c.text(p.description)
	if row.SKU == "" {
		row.SKU = strings.TrimSpace(row.Model + " " + c.text(p.tokenType))
	}
	row.SubAccountID = c.text(p.workspace)
	c.tag("cost_type", c.text(p.costType))
	c.tag("token_type", c.text(p.tokenType))
	c.tag("service_tier", c.text(p.tier))
	c.tag("context_window", c.text(p.window))
	row.DedupeKey = joinKey(start.Format(time.RFC3339), row.SubAccountID, c.text(p.description), row.Model,
		c.text(p.tokenType), c.text(p.costType), c.text(p.tier), c.text(p.window), c.text(p.geo))
	return nil
}

// ---- LiteLLM spend logs ----

type liteLLMSpend struct {
	opts *Options
	requestID, spend, prompt, completion, start, end, model, modelGroup, provider,
	apiKey, user, endUser, metadata, requestTags, teamID, org int
}

func newLiteLLMSpend(h *header, o *Options) (parser, error) {
	p := &liteLLMSpend{opts: o,
		requestID: h.col("request_id"), spend: h.col("spend"), prompt: h.col("prompt_tokens"),
		completion: h.col("completion_tokens"), start: h.col("startTime", "start_time"), end: h.col("endTime", "end_time"),
		model: h.col("model"), modelGroup: h.col("model_group"), provider: h.col("custom_llm_provider"),
		apiKey: h.col("api_key"), user: h.col("user"), endUser: h.col("end_user"), metadata: h.col("metadata"),
		requestTags: h.col("request_tags"), teamID: h.col("team_id"), org: h.col("organization_id"),
	}
	return p, requireCols(SourceLiteLLMSpend, h, []string{"request_id"}, []string{"spend"}, []string{"startTime", "start_time"})
}

func (p *liteLLMSpend) parse(c *rowCtx, row *Row) error {
	id := c.text(p.requestID)
	if id == "" {
		return c.errAt(p.requestID, ErrEmptyValue, "every spend log row needs its request_id")
	}
	start, err := c.time(p.start)
	if err != nil {
		return err
	}
	llmRow(row, "", start, start)
	row.ServiceName = "LiteLLM proxy"
	row.ProviderName = c.text(p.provider)
	if row.ProviderName == "" {
		row.ProviderName = "LiteLLM"
	}
	if err := p.usage(c, row); err != nil {
		return err
	}
	row.Model = c.text(p.model)
	if row.Model == "" {
		row.Model = c.text(p.modelGroup)
	}
	row.SKU = row.Model
	row.ResourceID = c.text(p.apiKey)
	row.SubAccountID = c.text(p.teamID)
	row.BillingAccountID = c.text(p.org)
	row.DedupeKey = id

	if err := parseTagMap(c.raw(p.requestTags), c.tag); err != nil {
		return c.looseErr(p.requestTags, err, `expected a JSON array like ["team:ml", "prod"]`)
	}
	meta, err := p.readMetadata(c)
	if err != nil {
		return err
	}
	row.CachedTokens = min(meta.cached, row.InputTokens)
	if user := c.text(p.user); user != "" {
		c.tag("user", user)
	} else {
		c.tag("user", c.text(p.endUser))
	}
	// Team: the org's tag key wins, then the team alias, then team_id.
	row.Team = c.teamTag()
	if row.Team == "" {
		row.Team = meta.alias
	}
	if row.Team == "" {
		row.Team = c.text(p.teamID)
	}
	return nil
}

// usage sets the request's cost, its tokens, and a request of one.
func (p *liteLLMSpend) usage(c *rowCtx, row *Row) error {
	cost, err := c.money(p.spend)
	if err != nil {
		return err
	}
	setCost(row, cost)
	if row.InputTokens, err = c.count(p.prompt); err != nil {
		return err
	}
	if row.OutputTokens, err = c.count(p.completion); err != nil {
		return err
	}
	row.Requests = 1
	row.ConsumedQuantity = decimal.NewFromInt(row.InputTokens + row.OutputTokens)
	return nil
}

// liteLLMMetadata is what a spend log row's metadata says beyond its tags.
type liteLLMMetadata struct {
	alias  string // the API key's team alias
	cached int64  // cached prompt tokens
}

// readMetadata reads the metadata column: it records the tags it holds
// (spend_logs_metadata and tags) and returns the team alias and the cached
// prompt tokens.
func (p *liteLLMSpend) readMetadata(c *rowCtx) (liteLLMMetadata, error) {
	var out liteLLMMetadata
	meta := c.text(p.metadata)
	if meta == "" || meta == "{}" || meta == "null" {
		return out, nil
	}
	v, err := parseLoose(meta)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return out, c.looseErr(p.metadata, err, "expected a JSON object")
	}
	out.alias, _ = m["user_api_key_team_alias"].(string)
	if sm, ok := m["spend_logs_metadata"].(map[string]any); ok {
		for k, val := range sm {
			c.tag(k, looseString(val))
		}
	}
	if tags, ok := m["tags"].([]any); ok {
		for _, t := range tags {
			if s, ok := t.(string); ok {
				if k, val, ok := strings.Cut(s, ":"); ok {
					c.tag(k, val)
				} else {
					c.tag(s, "true")
				}
			}
		}
	}
	if u, ok := m["usage_object"].(map[string]any); ok {
		if d, ok := u["prompt_tokens_details"].(map[string]any); ok {
			if n, ok := d["cached_tokens"].(number); ok {
				out.cached, _ = parseCount(string(n))
			}
		}
	}
	return out, nil
}

// ---- LiteLLM daily spend tables ----

type liteLLMDaily struct {
	opts *Options
	date, apiKey, model, modelGroup, provider, endpoint, mcp, prompt, completion,
	cacheRead, cacheCreate, spend, requests, teamID, userID, orgID, endUser, tag int
}

func newLiteLLMDaily(h *header, o *Options) (parser, error) {
	p := &liteLLMDaily{opts: o,
		date: h.col("date"), apiKey: h.col("api_key"), model: h.col("model"), modelGroup: h.col("model_group"),
		provider: h.col("custom_llm_provider"), endpoint: h.col("endpoint"), mcp: h.col("mcp_namespaced_tool_name"),
		prompt: h.col("prompt_tokens"), completion: h.col("completion_tokens"), cacheRead: h.col("cache_read_input_tokens"),
		cacheCreate: h.col("cache_creation_input_tokens"), spend: h.col("spend"), requests: h.col("api_requests"),
		teamID: h.col("team_id"), userID: h.col("user_id"), orgID: h.col("organization_id"), endUser: h.col("end_user"),
		tag: h.col("tag"),
	}
	h.need(p.date, p.spend)
	return p, nil
}

func (p *liteLLMDaily) parse(c *rowCtx, row *Row) error {
	day, err := c.time(p.date)
	if err != nil {
		return err
	}
	llmRow(row, "", day, endOrDay(day, time.Time{}))
	row.ServiceName = "LiteLLM proxy"
	row.ProviderName = c.text(p.provider)
	if row.ProviderName == "" {
		row.ProviderName = "LiteLLM"
	}
	cost, err := c.money(p.spend)
	if err != nil {
		return err
	}
	setCost(row, cost)
	var n [5]int64
	for i, col := range []int{p.prompt, p.completion, p.cacheRead, p.cacheCreate, p.requests} {
		if n[i], err = c.count(col); err != nil {
			return err
		}
	}
	row.InputTokens, row.OutputTokens, row.CachedTokens, row.Requests = n[0], n[1], min(n[2], n[0]), n[4]
	row.Model = c.text(p.model)
	if row.Model == "" {
		row.Model = c.text(p.modelGroup)
	}
	row.SKU = row.Model
	row.ResourceID = c.text(p.apiKey)
	row.SubAccountID = c.text(p.teamID)
	row.BillingAccountID = c.text(p.orgID)
	row.ConsumedQuantity = decimal.NewFromInt(row.InputTokens + row.OutputTokens)
	c.tag("user", c.text(p.userID))
	if t := c.text(p.tag); t != "" {
		if k, v, ok := strings.Cut(t, ":"); ok {
			c.tag(k, v)
		} else {
			c.tag(t, "true")
		}
	}
	row.Team = c.teamTag()
	if row.Team == "" {
		row.Team = c.text(p.teamID)
	}
	row.DedupeKey = joinKey(day.Format(time.DateOnly), c.text(p.teamID), c.text(p.userID), c.text(p.orgID), c.text(p.endUser),
		c.text(p.tag), row.ResourceID, row.Model, c.text(p.modelGroup), row.ProviderName, c.text(p.endpoint), c.text(p.mcp))
	return nil
}

// ---- OpenRouter activity export ----

type openRouter struct {
	opts *Options
	id, created, cost, prompt, completion, reasoning, cached, model, provider,
	user, apiKey, app int
}

func newOpenRouter(h *header, o *Options) (parser, error) {
	p := &openRouter{opts: o,
		id: h.col("generation_id"), created: h.col("created_at"), cost: h.col("cost_total"),
		prompt: h.col("tokens_prompt"), completion: h.col("tokens_completion"), reasoning: h.col("tokens_reasoning"),
		cached: h.col("tokens_cached"), model: h.col("model_permaslug", "model"), provider: h.col("provider_name"),
		user: h.col("user"), apiKey: h.col("api_key_name"), app: h.col("app_name"),
	}
	return p, requireCols(SourceOpenRouter, h, []string{"generation_id"}, []string{"created_at"}, []string{"cost_total"})
}

func (p *openRouter) parse(c *rowCtx, row *Row) error {
	id := c.text(p.id)
	if id == "" {
		return c.errAt(p.id, ErrEmptyValue, "every activity row needs its generation_id")
	}
	at, err := c.time(p.created)
	if err != nil {
		return err
	}
	llmRow(row, "OpenRouter", at, at)
	row.ServiceName = c.text(p.provider)
	if row.ServiceName == "" {
		row.ServiceName = "OpenRouter"
	}
	cost, err := c.money(p.cost)
	if err != nil {
		return err
	}
	setCost(row, cost)
	var n [4]int64
	for i, col := range []int{p.prompt, p.completion, p.reasoning, p.cached} {
		if n[i], err = c.count(col); err != nil {
			return err
		}
	}
	row.InputTokens, row.OutputTokens, row.CachedTokens = n[0], n[1], min(n[3], n[0])
	row.Requests = 1
	row.Model = c.text(p.model)
	row.SKU = row.Model
	row.SubAccountID = c.text(p.apiKey)
	row.ConsumedQuantity = decimal.NewFromInt(row.InputTokens + row.OutputTokens)
	c.tag("user", c.text(p.user))
	c.tag("app", c.text(p.app))
	row.DedupeKey = id
	return nil
}
