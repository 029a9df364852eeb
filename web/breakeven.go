package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// handleBreakEven shows the break-even page; like the advisor, a GET whose
// URL is the scenario, and a fragment for htmx.
func (s *Server) handleBreakEven(c echo.Context) error {
	return s.breakEvenPage(c, c.QueryParams(), nil, "", "")
}

// breakEvenPage renders the page (or, for htmx, the results) for the query
// q, filling what q lacks from the org's own usage.
func (s *Server) breakEvenPage(c echo.Context, q url.Values, sc *store.Scenario, saveName, saveErr string) error {
	v, err := s.breakEvenView(c, q)
	if err != nil {
		return err
	}
	v.Scenario, v.SaveName, v.SaveError = sc, saveName, saveErr
	status := http.StatusOK
	if len(v.Errors) > 0 || saveErr != "" {
		status = http.StatusUnprocessableEntity
	}
	if isHTMX(c) {
		return render(c, status, views.BreakEvenResults(s.fragmentShell(c), v))
	}
	title := "Break-even"
	if sc != nil {
		title = sc.Name + " · Break-even"
	}
	return render(c, status, views.BreakEvenPage(s.shell(c, title, "breakeven"), v))
}

// fragmentShell is the little of the shell a fragment needs (who may write,
// the CSRF token); unlike shell it leaves the session's flash alone.
func (s *Server) fragmentShell(c echo.Context) views.Shell {
	return views.Shell{User: currentUser(c), Org: currentOrg(c), Role: currentRole(c), CSRF: csrfToken(c)}
}

func (s *Server) breakEvenView(c echo.Context, q url.Values) (views.BreakEvenView, error) {
	ctx := c.Request().Context()
	st, org := s.db(c), currentOrg(c)
	now := s.now()
	usage, from, to, err := advisor.OrgUsage(ctx, st, *org, now)
	if err != nil {
		return views.BreakEvenView{}, err
	}
	peak, err := st.LLMPeakFactor(ctx, org.ID, from, to)
	if err != nil {
		return views.BreakEvenView{}, err
	}
	scenarios, err := st.Scenarios(ctx, org.ID, store.ScenarioBreakEven)
	if err != nil {
		return views.BreakEvenView{}, err
	}
	form := url.Values{}
	for k, vs := range q {
		if k != "_csrf" && k != "name" {
			form[k] = vs
		}
	}
	form = withDefaults(form, breakEvenDefaults(usage, peak))
	tiers, err := st.ModelSubstitutes(ctx, org.ID)
	if err != nil {
		return views.BreakEvenView{}, err
	}
	v := views.BreakEvenView{
		Form: form, Link: "/breakeven?" + form.Encode(), Usage: usage, Peak: peak, Scenarios: scenarios,
		UsageFrom: from.Format(time.DateOnly), UsageTo: to.AddDate(0, 0, -1).Format(time.DateOnly),
		Tiers: tiers, TiersText: tiersText(tiers),
	}
	b, errs := breakEvenBodyFromForm(form)
	// The mix is the one typed, priced model by model as the CLI's --usage
	// prices it (and the models and volume above are then the mix's own);
	// without one, the org's own usage, each model at its own rates.
	b.Usage = advisor.MixUsage(usage)
	if typed := strings.TrimSpace(form.Get("usage")); typed != "" {
		mix, err := advisor.ParseUsage("Usage mix", typed)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			b.Usage, b.Model, b.Models = mix, "", nil
			b.InputTokens, b.OutputTokens, b.CachedTokens = 0, 0, 0
			v.TypedMix = true
		}
	}
	if len(errs) > 0 {
		p, _ := advisor.LoadOrgPrices(ctx, nil, 0, advisor.PriceCatalog, now)
		v.Errors, v.Prices = errs, priceInfo(p)
		return v, nil
	}
	res, p, err := advisor.BreakEven(ctx, st, org.ID, b, now)
	if p.Catalog == nil {
		p, _ = advisor.LoadOrgPrices(ctx, nil, 0, advisor.PriceCatalog, now)
	}
	v.Prices = priceInfo(p)
	var ie *advisor.InputError
	switch {
	case errors.As(err, &ie):
		v.Errors = strings.Split(ie.Error(), "; ")
		return v, nil
	case err != nil:
		return v, err
	}
	v.Result = &res
	v.Chart = breakEvenChart(res, b.ModelList(), b.InputTokens+b.OutputTokens+b.CachedTokens)
	return v, nil
}

// breakEvenDefaults starts from the org's largest-spend model over the last
// 30 days (at its own price), on its own tokens, compared with an open model
// of its tier, with the org's measured peak factor.
func breakEvenDefaults(usage []store.LLMUsage, peak store.LLMPeak) url.Values {
	t := store.LLMUsage{}
	model := "gpt-4.1-mini"
	if u, ok := advisor.LargestSpend(usage, pricing.DefaultLLMPrices()); ok {
		model, t = u.Model, u
	}
	pf := "2"
	if peak.Factor >= 1 {
		pf = strconv.FormatFloat(peak.Factor, 'f', 2, 64)
	}
	return url.Values{
		"models": {model}, "input_tokens": {strconv.FormatInt(t.UncachedInputTokens(), 10)},
		"output_tokens": {strconv.FormatInt(t.OutputTokens, 10)}, "cached_tokens": {strconv.FormatInt(t.CachedTokens, 10)},
		"open_model": {""}, "substitutes": {""}, "usage": {""}, "precision": {""}, "pricing": {"on-demand"}, "utilization": {"0.7"},
		"peak_factor": {pf}, "overhead_month_usd": {"0"}, "seq_len": {"4096"}, "price_source": {advisor.PriceOverrides},
	}
}

// breakEvenBodyFromForm reads the break-even form; errs name each field
// that is not a number or is out of range.
func breakEvenBodyFromForm(v url.Values) (advisor.BreakEvenBody, []string) {
	f := formNumbers{v: v}
	b := advisor.BreakEvenBody{
		Model:        v.Get("models"),
		InputTokens:  f.float(quantity.Tokens, "input_tokens", "Input tokens"),
		OutputTokens: f.float(quantity.Tokens, "output_tokens", "Output tokens"),
		CachedTokens: f.float(quantity.Tokens, "cached_tokens", "Cached input"),
		Precision:    v.Get("precision"), GPU: v.Get("gpu"), Provider: v.Get("provider"),
		Spot:             v.Get("pricing") == "spot",
		Throughput:       f.float(quantity.Rate, "throughput", "Throughput per GPU"),
		GPUPrice:         f.money("gpu_price", "Price per GPU-hour"),
		Utilization:      f.float(quantity.Fraction, "utilization", "Target utilisation"),
		PeakFactor:       f.float(quantity.Factor, "peak_factor", "Peak factor"),
		OverheadMonthUSD: f.money("overhead_month_usd", "Fixed overhead"),
		SeqLen:           f.int(quantity.Count, "seq_len", "Context per sequence"),
		PriceSource:      v.Get("price_source"),
	}
	switch m := strings.TrimSpace(v.Get("open_model")); m {
	case "": // the tier table's substitute
	case "custom":
		b.OpenParams = f.float(quantity.Params, "open_params", "Parameters")
	default:
		b.OpenModel = m
	}
	subs, err := advisor.ParseSubstitutes(v.Get("substitutes"))
	if err != nil {
		f.errs = append(f.errs, "Open substitutes: "+strings.TrimPrefix(err.Error(), "substitutes: "))
	} else if len(subs) > 0 {
		b.Substitutes = subs
	}
	return b, f.errs
}

// breakEvenValues is the form for a saved body (the inverse of
// breakEvenBodyFromForm).
func breakEvenValues(b advisor.BreakEvenBody) url.Values {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	v := url.Values{
		"models":        {strings.Join(b.ModelList(), ", ")},
		"input_tokens":  {f(b.InputTokens)},
		"output_tokens": {f(b.OutputTokens)},
		"cached_tokens": {f(b.CachedTokens)},
		"open_model":    {b.OpenModel},
		"precision":     {b.Precision},
		"gpu":           {b.GPU},
		"provider":      {strings.Join(advisor.ProviderList(b.Provider, b.Providers), ",")},
		"pricing":       {"on-demand"},
		"price_source":  {b.PriceSource},
		"substitutes":   {advisor.FormatSubstitutes(b.Substitutes)},
		"usage":         {advisor.FormatUsage(b.Usage)},
	}
	if b.OpenModel == "" && b.OpenParams > 0 {
		v.Set("open_model", "custom")
		v.Set("open_params", f(b.OpenParams))
	}
	if b.Spot {
		v.Set("pricing", "spot")
	}
	set := func(key string, x float64) {
		if x != 0 {
			v.Set(key, f(x))
		} else {
			v.Set(key, "")
		}
	}
	set("throughput", b.Throughput)
	set("utilization", b.Utilization)
	set("peak_factor", b.PeakFactor)
	set("seq_len", float64(b.SeqLen))
	v.Set("gpu_price", "")
	if b.GPUPrice != nil {
		v.Set("gpu_price", b.GPUPrice.String())
	}
	v.Set("overhead_month_usd", "")
	if b.OverheadMonthUSD != nil {
		v.Set("overhead_month_usd", b.OverheadMonthUSD.String())
	}
	return v
}

// handleScenarioCreate saves the break-even inputs under a name, after
// checking they compute.
func (s *Server) handleScenarioCreate(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	name := label.Clean(c.FormValue("name"))
	if name == "" || len(name) > 100 {
		return s.breakEvenPage(c, form, nil, name, "Name the scenario (at most 100 characters).")
	}
	v, err := s.breakEvenView(c, form)
	if err != nil {
		return err
	}
	if len(v.Errors) > 0 {
		return s.breakEvenPage(c, form, nil, name, "Fix the inputs before saving: "+strings.Join(v.Errors, "; "))
	}
	b, _ := breakEvenBodyFromForm(v.Form)
	if typed := strings.TrimSpace(v.Form.Get("usage")); typed != "" {
		// A typed mix is part of the scenario (checked above).
		if b.Usage, err = advisor.ParseUsage("Usage mix", typed); err != nil {
			return err
		}
	}
	inputs, err := json.Marshal(b)
	if err != nil {
		return err
	}
	sc, err := s.db(c).CreateScenario(c.Request().Context(), currentOrg(c).ID, currentUser(c).ID, store.ScenarioBreakEven, name, inputs)
	if err != nil {
		return err
	}
	s.flash(c, "Saved “"+sc.Name+"”. Share this page's link with anyone in "+currentOrg(c).Name+".")
	return c.Redirect(http.StatusSeeOther, "/breakeven/scenarios/"+strconv.FormatInt(sc.ID, 10))
}

// handleScenarioShow opens a saved scenario, recomputed with today's prices.
func (s *Server) handleScenarioShow(c echo.Context) error {
	sc, err := s.scenario(c)
	if err != nil {
		return err
	}
	var b advisor.BreakEvenBody
	if err := json.Unmarshal(sc.Inputs, &b); err != nil {
		return fmt.Errorf("scenario %d inputs: %w", sc.ID, err)
	}
	return s.breakEvenPage(c, breakEvenValues(b), &sc, "", "")
}

func (s *Server) handleScenarioDelete(c echo.Context) error {
	sc, err := s.scenario(c)
	if err != nil {
		return err
	}
	if err := s.db(c).DeleteScenario(c.Request().Context(), currentOrg(c).ID, sc.ID); err != nil {
		return err
	}
	s.flash(c, "Deleted “"+sc.Name+"”.")
	return c.Redirect(http.StatusSeeOther, "/breakeven")
}

// scenario is the break-even scenario named by the path's :id, in the
// current org only.
func (s *Server) scenario(c echo.Context) (store.Scenario, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return store.Scenario{}, err
	}
	sc, err := s.db(c).Scenario(c.Request().Context(), currentOrg(c).ID, id)
	if err != nil {
		return sc, err
	}
	if sc.Kind != store.ScenarioBreakEven {
		return sc, fmt.Errorf("scenario %d is a %s scenario: %w", id, sc.Kind, store.ErrNotFound)
	}
	return sc, nil
}

// breakEvenChart is the ECharts option of monthly cost against monthly
// tokens (both log axes): a line per API model, the self-host step function,
// and the org's current volume marked.
func breakEvenChart(r pricing.BreakEvenResult, models []string, volume float64) map[string]any {
	var series []map[string]any
	for _, m := range models {
		var pts [][2]float64
		for _, p := range r.Curve {
			if y := p.APIUSDByModel[m].InexactFloat64(); y > 0 {
				pts = append(pts, [2]float64{float64(p.TokensPerMonth), y})
			}
		}
		series = append(series, map[string]any{"name": "API: " + m, "type": "line", "showSymbol": false, "data": pts})
	}
	var self [][2]float64
	for _, p := range r.Curve {
		if y := p.SelfHostUSD.InexactFloat64(); y > 0 {
			self = append(self, [2]float64{float64(p.TokensPerMonth), y})
		}
	}
	sh := map[string]any{
		// Whole GPUs: the cost of a point holds back to the previous point.
		"name": "Self-hosted (" + r.SelfHost.GPU + ")", "type": "line", "step": "start", "showSymbol": false, "data": self,
		"lineStyle": map[string]any{"width": 3},
	}
	if volume > 0 {
		sh["markLine"] = map[string]any{
			"symbol": "none", "silent": true,
			"label": map[string]any{"formatter": "your volume"},
			"data":  []map[string]any{{"xAxis": volume}},
		}
	}
	series = append(series, sh)
	return map[string]any{
		"animation": false,
		"tooltip":   map[string]any{"trigger": "axis"},
		"legend":    map[string]any{"type": "scroll", "top": 0},
		"grid":      map[string]any{"left": 80, "right": 40, "bottom": 60, "top": 50},
		"xAxis":     map[string]any{"type": "log", "name": "tokens / month", "nameLocation": "middle", "nameGap": 30, "axisLabel": map[string]any{"formatter": "tokens"}},
		"yAxis":     map[string]any{"type": "log", "name": "USD / month", "axisLabel": map[string]any{"formatter": "usd"}},
		"series":    series,
	}
}

// tiersText is an org's saved tier table edits as the form writes them.
func tiersText(ts []store.ModelSubstitute) string {
	m := map[string]string{}
	for _, t := range ts {
		m[t.APIModel] = t.OpenModel
	}
	return advisor.FormatSubstitutes(m)
}

// handleTiersSave saves the org's tier table edits (advisor.SaveSubstitutes):
// every break-even of the org uses them from then on. A bad edit shows the
// page with the message and the text as typed.
func (s *Server) handleTiersSave(c echo.Context) error {
	text := c.FormValue("tiers")
	if len(text) > 10_000 {
		return advisor.BadInput("tiers: at most 10,000 characters")
	}
	_, err := advisor.SaveSubstitutes(c.Request().Context(), s.db(c), currentOrg(c).ID, currentUser(c).ID, text)
	var ie *advisor.InputError
	if errors.As(err, &ie) {
		return s.tiersPage(c, text, "Tier table edits: "+strings.TrimPrefix(ie.Error(), "substitutes: "))
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		s.flash(c, "The shipped tier table is used again.")
	} else {
		s.flash(c, "Saved your tier table: every break-even of "+currentOrg(c).Name+" uses it.")
	}
	return c.Redirect(http.StatusSeeOther, "/breakeven#org-tiers")
}

// handleTiersReset drops the org's tier table edits.
func (s *Server) handleTiersReset(c echo.Context) error {
	if err := s.db(c).SetModelSubstitutes(c.Request().Context(), currentOrg(c).ID, currentUser(c).ID, nil); err != nil {
		return err
	}
	s.flash(c, "The shipped tier table is used again.")
	return c.Redirect(http.StatusSeeOther, "/breakeven#org-tiers")
}

// tiersPage is the break-even page with a refused tier table edit.
func (s *Server) tiersPage(c echo.Context, text, msg string) error {
	v, err := s.breakEvenView(c, url.Values{})
	if err != nil {
		return err
	}
	v.TiersText, v.TiersError = text, msg
	return render(c, http.StatusUnprocessableEntity, views.BreakEvenPage(s.shell(c, "Break-even", "breakeven"), v))
}
