package digest

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/quantity"
)

// ChartCID is the Content-ID of the chart in the email: the HTML shows it
// as <img src="cid:chart">.
const ChartCID = "chart"

// Render lays d out as a notification: subject, plain text, HTML with the
// chart as an inline PNG part, the dashboard link for the day, and, with
// unsubscribeURL, the List-Unsubscribe headers of RFC 8058 (one-click).
// baseURL (https://burnrate.example.com) makes the links absolute. The
// caller sets the recipients.
func Render(d Digest, baseURL, unsubscribeURL string) (notify.Notification, error) {
	r, err := newRenderer(d, baseURL)
	if err != nil {
		return notify.Notification{}, err
	}
	return r.render(unsubscribeURL)
}

// renderer renders one digest for several recipients, drawing its chart
// once.
type renderer struct {
	d       Digest
	baseURL string
	png     []byte
}

func newRenderer(d Digest, baseURL string) (renderer, error) {
	png, err := ChartPNG(d.Chart)
	return renderer{d: d, baseURL: baseURL, png: png}, err
}

func (r renderer) render(unsubscribeURL string) (notify.Notification, error) {
	v := newView(r.d, r.baseURL, unsubscribeURL, "cid:"+ChartCID)
	html, err := v.html()
	if err != nil {
		return notify.Notification{}, err
	}
	nt := notify.Notification{
		Kind: notify.KindDigest, OrgID: r.d.OrgID, Key: notify.DigestKey(r.d.Day),
		Subject: v.Subject, Text: v.text(), HTML: html, Link: v.DashboardURL,
		Inline:  []mail.Part{{ContentID: ChartCID, Filename: "chart.png", ContentType: "image/png", Data: r.png}},
		Payload: payload(r.d),
	}
	if unsubscribeURL != "" {
		nt.Headers = map[string]string{
			"List-Unsubscribe":      "<" + unsubscribeURL + ">",
			"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		}
	}
	return nt, nil
}

// PreviewHTML is d's email HTML with the chart as a data: URL rather than
// an inline part, for showing in a browser.
func PreviewHTML(d Digest, baseURL string) (string, error) {
	png, err := ChartPNG(d.Chart)
	if err != nil {
		return "", err
	}
	return newView(d, baseURL, "", "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png)).html()
}

// Text is d's plain-text body, as the CLI prints it.
func Text(d Digest, baseURL string) string { return newView(d, baseURL, "", "").text() }

// Subject is "Acme ML: $1,234.56 yesterday (Nov 30) — 2 budgets over".
func Subject(d Digest) string {
	var spent []string
	for _, a := range d.Spent() {
		spent = append(spent, quantity.FormatMoney(a.Amount, a.Name))
	}
	when := "on " + d.Day.Format("Jan 2")
	if d.Yesterday {
		when = "yesterday (" + d.Day.Format("Jan 2") + ")"
	}
	var s string
	switch {
	case d.Data.NoData:
		// Never a confident zero from data that is not in.
		s = label.Clean(d.OrgName) + ": no data yet for " + strings.TrimPrefix(when, "on ")
	case len(spent) == 0:
		s = label.Clean(d.OrgName) + ": nothing spent " + when
	default:
		s = label.Clean(d.OrgName) + ": " + strings.Join(spent, " + ") + " " + when
	}
	if !d.Data.NoData && len(d.Data.Missing) > 0 {
		s += " (partial)"
	}
	over, forecast := d.overCounts()
	var parts []string
	if over > 0 {
		parts = append(parts, plural(over, "budget")+" over")
	}
	if forecast > 0 {
		if over > 0 {
			parts = append(parts, strconv.Itoa(forecast)+" forecast over")
		} else {
			parts = append(parts, plural(forecast, "budget")+" forecast over")
		}
	}
	if len(parts) > 0 {
		s += " — " + strings.Join(parts, ", ")
	}
	return s
}

func (d Digest) overCounts() (over, forecast int) {
	for _, b := range d.Budgets {
		switch {
		case b.Over:
			over++
		case b.ForecastOver:
			forecast++
		}
	}
	return over, forecast
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// view is the digest's words and figures, formatted once for the text and
// the HTML alike.
type view struct {
	Title      string // "Acme ML — Monday, November 30, 2026"
	Subject    string
	Currencies []currencyView
	Budgets    []budgetView
	Over       int
	Hint       string
	HintURL    string
	Savings    string // "$1,234.00/month", "" when none found
	SavingsURL string
	// Data says what of the day is missing, and which sources are late or
	// failing: lines for people.
	NoData         string   // "No data for Mon 30 Nov yet: newest AWS through Sat 28 Nov."
	DataLines      []string // "AWS (aws-cur) has sent nothing of Mon 30 Nov yet: through Sat 28 Nov"
	OnTrack        bool     // every budget is on track, on data that is in
	ConnectionsURL string
	ChartSrc       string // "" in the text
	ChartAlt       string
	DashboardURL   string
	BudgetsURL     string
	SettingsURL    string
	UnsubscribeURL string
}

type currencyView struct {
	Currency    string
	Spent       string
	DayBefore   string // "+12% on the day before (1,100.00)"
	Month       string // "Month to date 12,000.00; forecast for November 30,000.00"
	Providers   []pair
	Movers      []pair
	Anomaly     string
	GPUHours    string // "120.5 GPU-hours: H100 80.0, A100 40.5"
	Tokens      string // "12,345,678 tokens in, 1,234 out, 2,000 requests"
	Drivers     []pair
	HasProvider bool
}

type pair struct{ Name, Value string }

type budgetView struct {
	State  string // "OVER", "FORECAST OVER", "DATA LATE", "ok"
	Bad    bool
	Stale  bool
	Name   string
	Period string // "daily", "monthly"
	Line   string // "1,234.56 of 1,000.00 USD (123%)"
	Extra  string // "forecast 35,000.00 USD, runs out on 2026-11-27"
}

func newView(d Digest, baseURL, unsubscribeURL, chartSrc string) view {
	base := strings.TrimRight(baseURL, "/")
	date := d.Date()
	v := view{
		Title:          label.Clean(d.OrgName) + " — " + d.Day.Format("Monday, January 2, 2006"),
		Subject:        Subject(d),
		ChartSrc:       chartSrc,
		DashboardURL:   base + "/dashboard?range=custom&from=" + date + "&to=" + date,
		BudgetsURL:     base + "/budgets",
		SettingsURL:    base + "/settings/digest",
		ConnectionsURL: base + "/connections",
		UnsubscribeURL: unsubscribeURL,
	}
	v.NoData, v.DataLines = dataLines(d)
	v.ChartAlt = "Daily spend in " + d.Chart.Currency + " for the " + strconv.Itoa(len(d.Chart.Days)) + " days to " + date
	if d.Chart.Line.IsPositive() {
		v.ChartAlt += ", against the " + label.Clean(d.Chart.LineLabel) + " (" + quantity.FormatMoney(d.Chart.Line, d.Chart.Currency) + " a day)"
	}
	for _, c := range d.Currencies {
		cv := currencyViewOf(c, d.Day)
		if d.Data.NoData {
			cv.Spent, cv.DayBefore = "No data yet", "the day's spend is not known yet, not zero"
		}
		v.Currencies = append(v.Currencies, cv)
	}
	for _, b := range d.Budgets {
		bv := budgetView{Name: label.Clean(b.Name), Period: b.Period, State: "ok",
			Line: quantity.FormatMoney(b.Spent, b.Currency) + " of " + quantity.FormatMoney(b.Amount, b.Currency) + " (" + strconv.Itoa(b.Percent) + "%)"}
		switch {
		case b.Over:
			bv.State, bv.Bad = "OVER", true
		case b.ForecastOver:
			bv.State, bv.Bad = "FORECAST OVER", true
		}
		if b.Stale && !b.Over {
			bv.State, bv.Stale = "DATA LATE", true
		}
		if b.Period == "monthly" {
			bv.Extra = "no forecast"
			if b.Forecast != nil {
				bv.Extra = "forecast " + quantity.FormatMoney(*b.Forecast, b.Currency)
			}
			switch {
			case b.RunsOut != "" && b.Over:
				bv.Extra += ", ran out on " + b.RunsOut // spent already, on a day past
			case b.RunsOut != "":
				bv.Extra += ", runs out on " + b.RunsOut
			}
		}
		if b.DataNote != "" {
			bv.Extra = strings.TrimPrefix(bv.Extra+" — "+label.Clean(b.DataNote), " — ")
		}
		if bv.Bad {
			v.Over++
		}
		v.Budgets = append(v.Budgets, bv)
	}
	v.OnTrack = len(v.Budgets) > 0 && !slices.ContainsFunc(v.Budgets, func(b budgetView) bool { return b.Bad || b.Stale }) &&
		d.Data.Complete()
	if d.Hint != nil {
		v.Hint, v.HintURL = d.Hint.Text, base+d.Hint.Link
	}
	var found []string
	for _, a := range d.Savings {
		found = append(found, quantity.FormatMoney(a.Amount, a.Name)+"/month")
	}
	v.Savings, v.SavingsURL = strings.Join(found, " and "), base+"/savings"
	return v
}

func currencyViewOf(c Currency, day time.Time) currencyView {
	cur := c.Currency
	cv := currencyView{Currency: cur, Spent: quantity.FormatMoney(c.Spent, cur)}
	if c.DayBefore.IsZero() && c.Spent.IsZero() {
		cv.DayBefore = "nothing the day before either"
	} else {
		cv.DayBefore = c.ChangePercent + " on the day before (" + quantity.FormatMoney(c.DayBefore, cur) + ")"
		if c.Change.IsZero() {
			cv.DayBefore = "the same as the day before"
		}
	}
	cv.Month = "Month to date " + quantity.FormatMoney(c.MonthToDate, cur) + "; "
	if c.Forecast != nil {
		cv.Month += "forecast for " + day.Format("January") + " " + quantity.FormatMoney(*c.Forecast, cur)
		if c.ForecastNote != "" {
			cv.Month += " (" + label.Clean(c.ForecastNote) + ": the forecast lacks it)"
		}
	} else {
		cv.Month += "no forecast: " + label.Clean(strings.TrimSuffix(c.ForecastNote, "."))
	}
	for _, p := range c.Providers {
		cv.Providers = append(cv.Providers, pair{label.Clean(p.Name), quantity.FormatMoney(p.Amount, cur)})
	}
	cv.HasProvider = len(cv.Providers) > 0
	for _, m := range c.Movers {
		sign := ""
		if m.Change.IsPositive() {
			sign = "+"
		}
		pct := m.Percent
		if pct != "new" && m.Change.IsPositive() {
			pct = "+" + pct
		}
		cv.Movers = append(cv.Movers, pair{label.Clean(m.Name), sign + quantity.FormatMoney(m.Change, cur) + " (" + pct + ")"})
	}
	if c.Anomaly != nil {
		cv.Anomaly = label.Clean(c.Anomaly.Note)
	}
	if c.GPUHours.IsPositive() {
		var gs []string
		for _, g := range c.GPUs {
			gs = append(gs, label.Clean(orNone(g.GPU))+" "+quantity.Group(g.Hours.StringFixed(1)))
		}
		cv.GPUHours = quantity.Group(c.GPUHours.StringFixed(1)) + " GPU-hours: " + strings.Join(gs, ", ")
	}
	if c.InputTokens+c.OutputTokens > 0 {
		cv.Tokens = quantity.Group(strconv.FormatInt(c.InputTokens, 10)) + " tokens in, " +
			quantity.Group(strconv.FormatInt(c.OutputTokens, 10)) + " out"
		if c.Requests > 0 {
			cv.Tokens += ", " + quantity.Group(strconv.FormatInt(c.Requests, 10)) + " requests"
		}
	}
	for _, dr := range c.Drivers {
		var parts []string
		for _, p := range []string{dr.Provider, dr.Service, dr.Account, dr.Model} {
			if p != "" {
				parts = append(parts, label.Clean(p))
			}
		}
		cv.Drivers = append(cv.Drivers, pair{strings.Join(parts, " · "), quantity.FormatMoney(dr.Amount, cur)})
	}
	return cv
}

func (v view) html() (string, error) {
	var b strings.Builder
	if err := mailHTML(v).Render(context.Background(), &b); err != nil {
		return "", fmt.Errorf("digest: render: %w", err)
	}
	return b.String(), nil
}

func (v view) text() string {
	var t strings.Builder
	t.WriteString(v.Title + "\n\n")
	if v.NoData != "" {
		t.WriteString(v.NoData + "\n\n")
	}
	if len(v.DataLines) > 0 {
		t.WriteString("Data:\n")
		for _, l := range v.DataLines {
			t.WriteString("  " + l + "\n")
		}
		t.WriteString("Connections: " + v.ConnectionsURL + "\n\n")
	}
	for _, c := range v.Currencies {
		t.WriteString("Spent " + c.Spent + ", " + c.DayBefore + ".\n")
		t.WriteString(c.Month + ".\n")
		if c.Anomaly != "" {
			t.WriteString("Unusual day: " + c.Anomaly + "\n")
		}
		list := func(title string, ps []pair) {
			if len(ps) == 0 {
				return
			}
			t.WriteString(title + ":\n")
			for _, p := range ps {
				t.WriteString("  " + p.Value + "  " + p.Name + "\n")
			}
		}
		list("By provider", c.Providers)
		list("Changed most since the day before", c.Movers)
		list("Largest costs", c.Drivers)
		if c.GPUHours != "" {
			t.WriteString("GPUs: " + c.GPUHours + "\n")
		}
		if c.Tokens != "" {
			t.WriteString("LLM: " + c.Tokens + "\n")
		}
		t.WriteString("\n")
	}
	if len(v.Currencies) == 0 && v.NoData == "" {
		t.WriteString("Nothing was spent, and nothing was imported for this day.\n\n")
	}
	if len(v.Budgets) > 0 {
		t.WriteString("Budgets:\n")
		for _, b := range v.Budgets {
			t.WriteString("  " + b.State + "  “" + b.Name + "” (" + b.Period + "): " + b.Line)
			if b.Extra != "" {
				t.WriteString(", " + b.Extra)
			}
			t.WriteString("\n")
		}
		t.WriteString("\n")
	} else {
		t.WriteString("No budgets are set: " + v.BudgetsURL + "\n\n")
	}
	if v.Hint != "" {
		t.WriteString("Cheaper option: " + v.Hint + " " + v.HintURL + "\n\n")
	}
	if v.Savings != "" {
		t.WriteString("Savings found: " + v.Savings + " — see Savings " + v.SavingsURL + "\n\n")
	}
	t.WriteString("This day on the dashboard: " + v.DashboardURL + "\n")
	if v.UnsubscribeURL != "" {
		t.WriteString("Stop these emails: " + v.UnsubscribeURL + "\n")
	}
	return t.String()
}

// dataLines words d.Data: the line that replaces the day's numbers when
// none are in, and one line per source missing some of the day, late, or
// failing.
func dataLines(d Digest) (noData string, lines []string) {
	day := d.Day.Format("Mon 2 Jan")
	through := func(s freshness.View) string {
		t, err := time.Parse(time.DateOnly, s.LastDay)
		if err != nil {
			return s.LastDay
		}
		return t.Format("Mon 2 Jan")
	}
	if d.Data.NoData {
		var newest []string
		for i, s := range d.Data.Missing {
			if i == 3 {
				break
			}
			newest = append(newest, label.Clean(s.Name)+" through "+through(s))
		}
		noData = "No data for " + day + " yet: newest " + strings.Join(newest, ", ") + ". Its spend is not known yet, not zero."
	} else {
		for _, s := range d.Data.Missing {
			lines = append(lines, label.Clean(s.Name)+" ("+s.Source+") has not sent all of "+day+" yet: through "+through(s))
		}
	}
	for _, s := range d.Data.Late {
		lines = append(lines, fmt.Sprintf("%s (%s) is late: through %s, and usually within %s", label.Clean(s.Name), s.Source,
			through(s), lagText(s.ExpectedLagHours)))
	}
	for _, c := range d.Data.Connections {
		l := "Connection “" + label.Clean(c.Name) + "” " + c.Health
		if c.Error != "" {
			l += ": " + label.Clean(c.Error)
		}
		if c.Fix != "" {
			l += ". " + label.Clean(c.Fix)
		}
		lines = append(lines, l)
	}
	return noData, lines
}

// lagText is an expected lag in words: "36 hours".
func lagText(hours float64) string {
	return strconv.FormatFloat(hours, 'f', -1, 64) + " hours"
}

func payload(d Digest) map[string]any {
	var spent []map[string]any
	for _, a := range d.Spent() {
		spent = append(spent, map[string]any{"currency": a.Name, "amount": a.Amount.String()})
	}
	var over []map[string]any
	for _, b := range d.Budgets {
		if b.Over || b.ForecastOver {
			var forecast any
			if b.Forecast != nil {
				forecast = b.Forecast.String()
			}
			over = append(over, map[string]any{"id": b.ID, "name": b.Name, "period": b.Period, "currency": b.Currency,
				"amount": b.Amount.String(), "spent": b.Spent.String(), "forecast": forecast,
				"over": b.Over, "forecast_over": b.ForecastOver})
		}
	}
	return map[string]any{"org": d.OrgSlug, "date": d.Date(), "spent": spent, "over": over, "data": d.Data}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
