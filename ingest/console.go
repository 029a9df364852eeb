package ingest

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/pricing"
)

// This file holds the Claude Console's downloads: the Cost page's and the
// Usage page's CSV exports (docs/import-formats.md,
// "anthropic-console-cost", "anthropic-console-usage"). Both are daily
// rows in UTC; the cost file names models as people read them ("Claude
// Haiku 4.5"), which pricing.ClaudeModelID turns into the API id the usage
// file, the Admin API and the price table use.

// consoleModel is the API id of the model a Console row names: a display
// name through the table, an id as it is.
func consoleModel(name string, day time.Time) string {
	id, _ := pricing.ClaudeModelID(name, day)
	return id
}

// ---- Claude Console cost download ----

type consoleCost struct {
	date, model, workspace, apiKey, usageType, window, tokenType, cost, costType int
}

func newConsoleCost(h *header, _ *Options) (parser, error) {
	p := &consoleCost{
		date: h.col("usage_date_utc"), model: h.col("model"), workspace: h.col("workspace"), apiKey: h.col("api_key"),
		usageType: h.col("usage_type"), window: h.col("context_window"), tokenType: h.col("token_type"),
		cost: h.col("cost_usd"), costType: h.col("cost_type"),
	}
	return p, requireCols(SourceConsoleCost, h, []string{"usage_date_utc"}, []string{"cost_usd"})
}

func (p *consoleCost) parse(c *rowCtx, row *Row) error {
	if c.text(p.cost) == "" && c.text(p.model) == "" && c.text(p.tokenType) == "" {
		return errSkip
	}
	day, err := c.time(p.date)
	if err != nil {
		return err
	}
	llmRow(row, "Anthropic", day, endOrDay(day, time.Time{}))
	row.ServiceName = "Claude API"
	row.ConsumedUnit = ""
	cost, err := c.money(p.cost)
	if err != nil {
		return err
	}
	setCost(row, cost)
	name := c.text(p.model)
	row.Model = consoleModel(name, day)
	row.SKU = strings.TrimSpace(name + " " + c.text(p.tokenType))
	row.SubAccountID = c.text(p.workspace)
	row.ResourceID = c.text(p.apiKey)
	c.tag("usage_type", c.text(p.usageType))
	c.tag("token_type", c.text(p.tokenType))
	c.tag("context_window", c.text(p.window))
	c.tag("cost_type", c.text(p.costType))
	// The key has the model as the file names it: a later table that maps
	// the name otherwise still finds the row to replace.
	row.DedupeKey = joinKey(day.Format(time.DateOnly), name, row.SubAccountID, row.ResourceID, c.text(p.usageType),
		c.text(p.window), c.text(p.tokenType), c.text(p.costType))
	return nil
}

// ---- Claude Console usage download ----

type consoleUsage struct {
	opts                                                                                                  *Options
	date, model, apiKey, workspace, usageType, window, uncached, write5m, write1h, read, output, searches int
}

func newConsoleUsage(h *header, o *Options) (parser, error) {
	if err := requireCols(SourceConsoleUsage, h, []string{"usage_date_utc"}, []string{"model_version", "model"},
		[]string{"usage_input_tokens_no_cache"}, []string{"usage_output_tokens"}); err != nil {
		return nil, err
	}
	if err := needPricer(o, SourceConsoleUsage); err != nil {
		return nil, err
	}
	return &consoleUsage{opts: o,
		date: h.col("usage_date_utc"), model: h.col("model_version", "model"), apiKey: h.col("api_key"), workspace: h.col("workspace"),
		usageType: h.col("usage_type"), window: h.col("context_window"), uncached: h.col("usage_input_tokens_no_cache"),
		write5m: h.col("usage_input_tokens_cache_write_5m"), write1h: h.col("usage_input_tokens_cache_write_1h"),
		read: h.col("usage_input_tokens_cache_read"), output: h.col("usage_output_tokens"), searches: h.col("web_search_count"),
	}, nil
}

func (p *consoleUsage) parse(c *rowCtx, row *Row) error {
	day, err := c.time(p.date)
	if err != nil {
		return err
	}
	llmRow(row, "Anthropic", day, endOrDay(day, time.Time{}))
	row.ServiceName = "Claude API"
	var n [6]int64
	for i, col := range []int{p.uncached, p.write5m, p.write1h, p.read, p.output, p.searches} {
		if n[i], err = c.count(col); err != nil {
			return err
		}
	}
	u := pricing.TokenUsage{Uncached: n[0], CacheWrite5m: n[1], CacheWrite1h: n[2], CacheRead: n[3], Output: n[4],
		LongContext: longContext(c.text(p.window))}
	row.InputTokens = u.Uncached + u.CacheWrite5m + u.CacheWrite1h + u.CacheRead
	row.CachedTokens = u.CacheRead
	row.OutputTokens = u.Output
	row.ConsumedQuantity = decimal.NewFromInt(row.InputTokens + row.OutputTokens)
	name := c.text(p.model)
	row.Model = consoleModel(name, day)
	row.SKU = row.Model
	row.SubAccountID = c.text(p.workspace)
	row.ResourceID = c.text(p.apiKey)
	usageType := c.text(p.usageType)
	c.tag("usage_type", usageType)
	c.tag("context_window", c.text(p.window))
	cost, err := claudeUsageCost(c, p.opts.Pricer, p.model, row.Model, u, strings.EqualFold(usageType, "batch"), n[5])
	if err != nil {
		return err
	}
	setCost(row, cost)
	row.PricedByUs = true
	row.DedupeKey = joinKey(day.Format(time.DateOnly), name, row.SubAccountID, row.ResourceID, usageType, c.text(p.window))
	return nil
}
