package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/burnrate/burnrate/jsonlimit"
)

// CallTimeout bounds each call to a provider, retries apart.
const CallTimeout = 60 * time.Second

// maxResponseBytes bounds one response page: a report page is kilobytes.
const maxResponseBytes = 32 << 20

// Retry is how a call answered 429 or 5xx, or cut off, is tried again.
type Retry struct {
	Attempts int           // in all, the first included
	Wait     time.Duration // before the second try; doubled each time
	MaxWait  time.Duration // a Retry-After longer than this is cut to it
}

// DefaultRetry tries a call four times over about a minute.
var DefaultRetry = Retry{Attempts: 4, Wait: 2 * time.Second, MaxWait: 30 * time.Second}

// ProviderError is a provider's answer that was not a success, in plain
// words, for the Connections page.
type ProviderError struct {
	Provider string
	Status   int // 0: no answer
	Msg      string
}

func (e *ProviderError) Error() string {
	if e.Status == 0 {
		return e.Provider + ": " + e.Msg
	}
	return fmt.Sprintf("%d from %s: %s", e.Status, e.Provider, e.Msg)
}

// Transient reports whether trying later may succeed: the provider was
// busy (429), failing (5xx) or out of reach. A refused key (401, 403) or a
// bad request needs a person.
func (e *ProviderError) Transient() bool {
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Transient reports whether err is worth retrying later.
func Transient(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Transient()
}

// explain turns a refusal into advice, by status.
func explain(provider string, status int, body []byte) string {
	msg := providerMessage(body)
	switch status {
	case http.StatusUnauthorized:
		return "the key was refused: it is not an admin key, or it was revoked" + suffix(msg)
	case http.StatusForbidden:
		return "the key may not read this report: use an admin key of the organization" + suffix(msg)
	case http.StatusNotFound:
		return "no such endpoint" + suffix(msg)
	case http.StatusTooManyRequests:
		return "rate limited; tried again and gave up for now" + suffix(msg)
	}
	if status >= 500 {
		return provider + " is failing; will try again later" + suffix(msg)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return msg
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + msg + ")"
}

// providerMessage finds the message in an error body: both providers
// answer {"error": {"message": "…"}}.
func providerMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if jsonlimit.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return clip(e.Error.Message, 200)
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(scrub(s)), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// caller makes a provider's GET requests: each bounded by CallTimeout,
// retried on 429, 5xx and broken connections, decoded as JSON with numbers
// kept as written.
type caller struct {
	provider string
	client   *http.Client
	retry    Retry
	header   http.Header
}

func (s *Service) caller(provider string, header http.Header) *caller {
	c := &caller{provider: provider, client: s.HTTP, retry: s.Retry, header: header}
	if c.client == nil {
		c.client = &http.Client{Timeout: CallTimeout}
	}
	if c.retry.Attempts <= 0 {
		c.retry = DefaultRetry
	}
	return c
}

// get fetches url into v.
func (c *caller) get(ctx context.Context, url string, v any) error {
	wait := c.retry.Wait
	var last error
	for attempt := 1; ; attempt++ {
		retryAfter, err := c.try(ctx, url, v)
		if err == nil {
			return nil
		}
		last = err
		var pe *ProviderError
		if !errors.As(err, &pe) || !pe.Transient() || attempt >= c.retry.Attempts || ctx.Err() != nil {
			return last
		}
		d := wait
		if retryAfter > 0 {
			d = retryAfter
		}
		if c.retry.MaxWait > 0 && d > c.retry.MaxWait {
			d = c.retry.MaxWait
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(d):
		}
		wait *= 2
	}
}

func (c *caller) try(ctx context.Context, url string, v any) (retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		if msg, ok := unreachable(err, ""); ok {
			return 0, &ProviderError{Provider: c.provider, Msg: msg}
		}
		// The URL is ours, but the error repeats it; the key is in a
		// header, never in the URL.
		return 0, &ProviderError{Provider: c.provider, Msg: "no answer: " + clip(err.Error(), 200)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return 0, &ProviderError{Provider: c.provider, Msg: "the answer was cut off: " + clip(err.Error(), 200)}
	}
	if resp.StatusCode != http.StatusOK {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			retryAfter = time.Duration(s) * time.Second
		}
		return retryAfter, &ProviderError{Provider: c.provider, Status: resp.StatusCode, Msg: explain(c.provider, resp.StatusCode, body)}
	}
	if len(body) > maxResponseBytes {
		return 0, &ProviderError{Provider: c.provider, Status: resp.StatusCode, Msg: fmt.Sprintf("a page of the report is over %d MB", maxResponseBytes>>20)}
	}
	if err := jsonlimit.Check(body); err != nil {
		return 0, &ProviderError{Provider: c.provider, Status: resp.StatusCode, Msg: "the answer is not the report's JSON: " + err.Error()}
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return 0, &ProviderError{Provider: c.provider, Status: resp.StatusCode, Msg: "the answer is not the report's JSON: " + clip(err.Error(), 200)}
	}
	return 0, nil
}

// maxPages bounds a report's pages: a year of daily buckets is a few.
const maxPages = 10_000

// page is a page of a report that pages by cursor: both providers answer
// has_more and next_page, and take the cursor back as ?page=.
type page interface {
	cursor() (hasMore bool, next *string)
}

// paginate fetches every page of the report at addr with query q, handing
// each to each in order, until a page says there is no more. A cursor that
// repeats the page just read, or a report without end, fails instead of
// looping.
func paginate[P any, PP interface {
	*P
	page
}](ctx context.Context, c *caller, addr string, q url.Values, each func(PP) error) error {
	cur := ""
	for n := 0; ; n++ {
		if n >= maxPages {
			return &ProviderError{Provider: c.provider, Msg: fmt.Sprintf("the report did not end after %d pages", maxPages)}
		}
		qq := maps.Clone(q)
		if qq == nil {
			qq = url.Values{}
		}
		if cur != "" {
			qq.Set("page", cur)
		}
		pg := PP(new(P))
		if err := c.get(ctx, addr+"?"+qq.Encode(), pg); err != nil {
			return err
		}
		if err := each(pg); err != nil {
			return err
		}
		more, next := pg.cursor()
		if !more || next == nil || *next == "" {
			return nil
		}
		if *next == cur {
			return &ProviderError{Provider: c.provider, Status: http.StatusOK, Msg: "the report's next_page repeats the page just read"}
		}
		cur = *next
	}
}
