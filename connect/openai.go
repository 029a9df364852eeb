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
	"strings"
	"time"

	"github.com/burnrate/burnrate/ingest"
)

// OpenAIURL is the OpenAI API.
const OpenAIURL = "https://api.openai.com"

// openAI pulls the organization's Costs API (daily buckets grouped by
// project and line item, in dollars) or its Completions Usage API (tokens
// by model, project and API key), with an admin key sent as a bearer
// token, and writes the buckets as the openai-costs or openai-usage CSV
// the importer reads (docs/import-formats.md).
type openAI struct{}

// openAIPage is one page of either report: buckets of results, and the
// cursor to the next page.
type openAIPage struct {
	Data []struct {
		StartTime json.Number       `json:"start_time"`
		EndTime   json.Number       `json:"end_time"`
		Results   []json.RawMessage `json:"results"`
	} `json:"data"`
	HasMore  bool    `json:"has_more"`
	NextPage *string `json:"next_page"`
}

type openAICost struct {
	Amount *struct {
		Value    json.Number `json:"value"`
		Currency string      `json:"currency"`
	} `json:"amount"`
	LineItem       *string `json:"line_item"`
	ProjectID      *string `json:"project_id"`
	OrganizationID *string `json:"organization_id"`
}

type openAIUsage struct {
	InputTokens       json.Number `json:"input_tokens"`
	OutputTokens      json.Number `json:"output_tokens"`
	InputCachedTokens json.Number `json:"input_cached_tokens"`
	NumModelRequests  json.Number `json:"num_model_requests"`
	ProjectID         *string     `json:"project_id"`
	UserID            *string     `json:"user_id"`
	APIKeyID          *string     `json:"api_key_id"`
	Model             *string     `json:"model"`
	Batch             *bool       `json:"batch"`
	ServiceTier       *string     `json:"service_tier"`
}

func (openAI) base(s *Service) string {
	if s.OpenAIURL != "" {
		return s.OpenAIURL
	}
	return OpenAIURL
}

func (o openAI) caller(s *Service, p pull) *caller {
	return s.caller("OpenAI", http.Header{"Authorization": {"Bearer " + p.cred.APIKey}})
}

// pages fetches every page of a report over [from, to).
func (o openAI) pages(ctx context.Context, s *Service, p pull, path string, q url.Values, each func(start, end time.Time, result json.RawMessage) error) error {
	return paginate(ctx, o.caller(s, p), o.base(s)+path, q, func(pg *openAIPage) error {
		for _, b := range pg.Data {
			start, err1 := unixTime(b.StartTime)
			end, err2 := unixTime(b.EndTime)
			if err1 != nil || err2 != nil {
				return &ProviderError{Provider: "OpenAI", Status: http.StatusOK, Msg: fmt.Sprintf("a bucket's start_time %q or end_time %q is not a Unix time", b.StartTime, b.EndTime)}
			}
			for _, r := range b.Results {
				if err := each(start, end, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (pg *openAIPage) cursor() (bool, *string) { return pg.HasMore, pg.NextPage }

func unixTime(n json.Number) (time.Time, error) {
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(i, 0).UTC(), nil
}

func windowQuery(from, to time.Time, limit int, groupBy ...string) url.Values {
	q := url.Values{
		"start_time":   {strconv.FormatInt(from.Unix(), 10)},
		"end_time":     {strconv.FormatInt(to.Unix(), 10)},
		"bucket_width": {"1d"},
		"limit":        {strconv.Itoa(limit)},
	}
	q["group_by"] = groupBy
	return q
}

func (o openAI) files(ctx context.Context, s *Service, p pull) ([]File, error) {
	from, to := p.window()
	name := fmt.Sprintf("%s %s to %s.csv", "%s", from.Format(time.DateOnly), to.AddDate(0, 0, -1).Format(time.DateOnly))
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rows := 0
	if p.set.Data == DataUsage {
		_ = w.Write([]string{"start_time_iso", "end_time_iso", "project_id", "user_id", "api_key_id", "model", "batch", "service_tier",
			"input_tokens", "output_tokens", "input_cached_tokens", "num_model_requests"})
		// Daily buckets: at most 31 a page.
		err := o.pages(ctx, s, p, "/v1/organization/usage/completions", windowQuery(from, to, 31, "project_id", "user_id", "api_key_id", "model", "batch", "service_tier"),
			func(start, end time.Time, raw json.RawMessage) error {
				var r openAIUsage
				if err := decodeResult(raw, &r, "OpenAI"); err != nil {
					return err
				}
				if zero(r.InputTokens) && zero(r.OutputTokens) && zero(r.NumModelRequests) {
					return nil
				}
				batch := ""
				if r.Batch != nil {
					batch = strconv.FormatBool(*r.Batch)
				}
				rows++
				return w.Write([]string{iso(start), iso(end), str(r.ProjectID), str(r.UserID), str(r.APIKeyID), str(r.Model), batch, str(r.ServiceTier),
					num(r.InputTokens), num(r.OutputTokens), num(r.InputCachedTokens), num(r.NumModelRequests)})
			})
		if err != nil {
			return nil, err
		}
		w.Flush()
		return []File{memFile(fmt.Sprintf(name, "openai-usage"), ingest.SourceOpenAIUsage, rows, buf.Bytes())}, w.Error()
	}
	_ = w.Write([]string{"start_time_iso", "end_time_iso", "organization_id", "project_id", "line_item", "amount_value", "amount_currency"})
	// Cost buckets are daily: at most 180 a page.
	err := o.pages(ctx, s, p, "/v1/organization/costs", windowQuery(from, to, 180, "project_id", "line_item"),
		func(start, end time.Time, raw json.RawMessage) error {
			var r openAICost
			if err := decodeResult(raw, &r, "OpenAI"); err != nil {
				return err
			}
			if r.Amount == nil || zero(r.Amount.Value) {
				return nil
			}
			rows++
			return w.Write([]string{iso(start), iso(end), str(r.OrganizationID), str(r.ProjectID), str(r.LineItem), string(r.Amount.Value), r.Amount.Currency})
		})
	if err != nil {
		return nil, err
	}
	w.Flush()
	return []File{memFile(fmt.Sprintf(name, "openai-costs"), ingest.SourceOpenAICosts, rows, buf.Bytes())}, w.Error()
}

func (o openAI) test(ctx context.Context, s *Service, p pull) error {
	to := day(p.now).AddDate(0, 0, 1)
	var pg openAIPage
	return o.caller(s, p).get(ctx, o.base(s)+"/v1/organization/costs?"+windowQuery(to.AddDate(0, 0, -1), to, 1).Encode(), &pg)
}

func decodeResult(raw json.RawMessage, v any, provider string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return &ProviderError{Provider: provider, Status: http.StatusOK, Msg: "a result is not in the documented shape: " + clip(err.Error(), 200)}
	}
	return nil
}

// zero reports whether a number as written is empty or zero (its digits
// before any exponent all 0), without parsing it: the importer parses every
// number for real, through package quantity.
func zero(n json.Number) bool {
	s := strings.TrimLeft(string(n), "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(s, "0.") == ""
}

func num(n json.Number) string { return string(n) }

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }
