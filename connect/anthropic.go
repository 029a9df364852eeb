package connect

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/burnrate/burnrate/ingest"
)

// AnthropicURL is the Anthropic API.
const AnthropicURL = "https://api.anthropic.com"

// anthropicVersion is the API version every request names.
const anthropicVersion = "2023-06-01"

// anthropic pulls the Admin API's cost report (amounts in cents, as
// decimal strings) or its messages usage report (tokens), with an admin key
// in x-api-key, and writes the buckets as the anthropic-cost or
// anthropic-usage CSV the importer reads (docs/import-formats.md). The
// amounts are copied as written: the anthropic-cost parser reads them as
// cents.
type anthropic struct{}

type anthropicPage struct {
	Data []struct {
		StartingAt string            `json:"starting_at"`
		EndingAt   string            `json:"ending_at"`
		Results    []json.RawMessage `json:"results"`
	} `json:"data"`
	HasMore  bool    `json:"has_more"`
	NextPage *string `json:"next_page"`
}

type anthropicCost struct {
	Amount        json.Number `json:"amount"` // cents, a decimal string
	Currency      string      `json:"currency"`
	WorkspaceID   *string     `json:"workspace_id"`
	Description   *string     `json:"description"`
	Model         *string     `json:"model"`
	CostType      *string     `json:"cost_type"`
	TokenType     *string     `json:"token_type"`
	ServiceTier   *string     `json:"service_tier"`
	ContextWindow *string     `json:"context_window"`
	InferenceGeo  *string     `json:"inference_geo"`
}

type anthropicUsage struct {
	UncachedInputTokens  json.Number `json:"uncached_input_tokens"`
	CacheReadInputTokens json.Number `json:"cache_read_input_tokens"`
	CacheCreation        struct {
		Ephemeral5m json.Number `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h json.Number `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	OutputTokens  json.Number `json:"output_tokens"`
	ServerToolUse struct {
		WebSearchRequests json.Number `json:"web_search_requests"`
	} `json:"server_tool_use"`
	APIKeyID      *string `json:"api_key_id"`
	WorkspaceID   *string `json:"workspace_id"`
	Model         *string `json:"model"`
	ServiceTier   *string `json:"service_tier"`
	ContextWindow *string `json:"context_window"`
	InferenceGeo  *string `json:"inference_geo"`
}

func (anthropic) base(s *Service) string {
	if s.AnthropicURL != "" {
		return s.AnthropicURL
	}
	return AnthropicURL
}

func (a anthropic) caller(s *Service, p pull) *caller {
	return s.caller("Anthropic", http.Header{"X-Api-Key": {p.cred.APIKey}, "Anthropic-Version": {anthropicVersion}})
}

func anthropicQuery(from, to time.Time, groupBy ...string) url.Values {
	return url.Values{
		"starting_at":  {iso(from)},
		"ending_at":    {iso(to)},
		"bucket_width": {"1d"},
		"limit":        {"31"}, // the most daily buckets a page holds
		"group_by[]":   groupBy,
	}
}

func (a anthropic) pages(ctx context.Context, s *Service, p pull, path string, q url.Values, each func(start, end string, result json.RawMessage) error) error {
	return paginate(ctx, a.caller(s, p), a.base(s)+path, q, func(pg *anthropicPage) error {
		for _, b := range pg.Data {
			for _, r := range b.Results {
				if err := each(b.StartingAt, b.EndingAt, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (pg *anthropicPage) cursor() (bool, *string) { return pg.HasMore, pg.NextPage }

func (a anthropic) files(ctx context.Context, s *Service, p pull) ([]File, error) {
	from, to := p.window()
	name := fmt.Sprintf("%s %s to %s.csv", "%s", from.Format(time.DateOnly), to.AddDate(0, 0, -1).Format(time.DateOnly))
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rows := 0
	if p.set.Data == DataUsage {
		_ = w.Write([]string{"starting_at", "ending_at", "workspace_id", "api_key_id", "model", "service_tier", "context_window", "inference_geo",
			"uncached_input_tokens", "cache_read_input_tokens", "cache_creation.ephemeral_5m_input_tokens",
			"cache_creation.ephemeral_1h_input_tokens", "output_tokens", "server_tool_use.web_search_requests"})
		err := a.pages(ctx, s, p, "/v1/organizations/usage_report/messages",
			anthropicQuery(from, to, "workspace_id", "api_key_id", "model", "service_tier", "context_window"),
			func(start, end string, raw json.RawMessage) error {
				var r anthropicUsage
				if err := decodeResult(raw, &r, "Anthropic"); err != nil {
					return err
				}
				if zero(r.UncachedInputTokens) && zero(r.CacheReadInputTokens) && zero(r.CacheCreation.Ephemeral5m) &&
					zero(r.CacheCreation.Ephemeral1h) && zero(r.OutputTokens) && zero(r.ServerToolUse.WebSearchRequests) {
					return nil
				}
				rows++
				return w.Write([]string{start, end, str(r.WorkspaceID), str(r.APIKeyID), str(r.Model), str(r.ServiceTier), str(r.ContextWindow), str(r.InferenceGeo),
					num(r.UncachedInputTokens), num(r.CacheReadInputTokens), num(r.CacheCreation.Ephemeral5m),
					num(r.CacheCreation.Ephemeral1h), num(r.OutputTokens), num(r.ServerToolUse.WebSearchRequests)})
			})
		if err != nil {
			return nil, err
		}
		w.Flush()
		return []File{memFile(fmt.Sprintf(name, "anthropic-usage"), ingest.SourceAnthropicUsage, rows, buf.Bytes())}, w.Error()
	}
	_ = w.Write([]string{"starting_at", "ending_at", "workspace_id", "description", "model", "cost_type", "token_type", "service_tier",
		"context_window", "inference_geo", "amount", "currency"})
	err := a.pages(ctx, s, p, "/v1/organizations/cost_report", anthropicQuery(from, to, "workspace_id", "description"),
		func(start, end string, raw json.RawMessage) error {
			var r anthropicCost
			if err := decodeResult(raw, &r, "Anthropic"); err != nil {
				return err
			}
			if zero(r.Amount) {
				return nil
			}
			rows++
			return w.Write([]string{start, end, str(r.WorkspaceID), str(r.Description), str(r.Model), str(r.CostType), str(r.TokenType),
				str(r.ServiceTier), str(r.ContextWindow), str(r.InferenceGeo), string(r.Amount), r.Currency})
		})
	if err != nil {
		return nil, err
	}
	w.Flush()
	return []File{memFile(fmt.Sprintf(name, "anthropic-cost"), ingest.SourceAnthropicCost, rows, buf.Bytes())}, w.Error()
}

func (a anthropic) test(ctx context.Context, s *Service, p pull) error {
	to := day(p.now).AddDate(0, 0, 1)
	q := anthropicQuery(to.AddDate(0, 0, -1), to)
	q.Set("limit", strconv.Itoa(1))
	var pg anthropicPage
	return a.caller(s, p).get(ctx, a.base(s)+"/v1/organizations/cost_report?"+q.Encode(), &pg)
}
