package schedule

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// AlertKind is the kind of notification a budget alert is.
const AlertKind = "budget_alert"

// AlertMessage is a budget alert as every channel sends it: an email's
// subject, plain text and HTML, the JSON body of a webhook, the link to the
// dashboard, and who the budget names as its recipients. Delivery (email,
// Slack, signed webhooks) is not this package's; it takes these fields as
// they are.
type AlertMessage struct {
	Kind       string // AlertKind
	OrgID      int64
	Subject    string
	Text       string
	HTML       string
	Payload    map[string]any // for JSON webhooks; amounts are decimal strings
	Link       string         // absolute URL of the filtered dashboard
	Recipients []string       // the budget's; may be empty (channels may still send)
}

// alertView is an alert's words, formatted once for the text and the HTML.
type alertView struct {
	Name        string
	Headline    string // "has crossed 80% of its budget"
	Spent       string // "812.40 USD of 1,000.00 USD (81%)"
	Period      string // "in March 2026 (monthly budget)" or "on 2026-03-08 (daily budget)"
	Forecast    string // "1,240.00 USD"; "" when withheld
	Caveat      string // what the forecast rests on, when the data is old or late
	RunsOut     string // "2026-03-24", or "" when it does not within the period
	RanOut      bool   // RunsOut is past: the amount is spent already
	Over        bool   // forecast over the amount
	Scope       string
	DriversFrom string
	Drivers     []driverLine
	Link        string
}

type driverLine struct {
	Amount string
	Slice  string // "AWS · Amazon EC2 · 1111 · gpt-4o"
}

// Message renders a as a notification; baseURL (such as
// https://burnrate.example.com) makes its link absolute.
func (a Alert) Message(ctx context.Context, baseURL string) (AlertMessage, error) {
	b := a.Budget()
	link := strings.TrimSuffix(baseURL, "/") + a.Link
	v := a.view(link)
	m := AlertMessage{
		Kind: AlertKind, OrgID: a.OrgID, Link: link, Recipients: slices.Clone(b.Recipients),
		Subject: "Budget “" + label.Clean(b.Name) + "” " + v.Headline + ": " + v.Spent,
		Text:    v.text(), Payload: a.payload(link),
	}
	var html strings.Builder
	if err := alertMail(v).Render(ctx, &html); err != nil {
		return AlertMessage{}, err
	}
	m.HTML = html.String()
	return m, nil
}

func (a Alert) view(link string) alertView {
	s := a.Status
	b := s.Budget
	v := alertView{
		Name:     label.Clean(b.Name),
		Headline: "has crossed " + percents(a.Thresholds) + " of its amount",
		Spent: quantity.FormatMoney(s.Spent, b.Currency) + " of " + quantity.FormatMoney(b.Amount, b.Currency) +
			" (" + strconv.Itoa(s.Percent) + "%)",
		Over:  s.ForecastOK && s.Forecast.GreaterThan(b.Amount),
		Scope: scopeText(b.Scope, b.Currency),
		Link:  link,
	}
	if budget.Period(b.Period) == budget.Daily {
		v.Period = "on " + s.First.Format(time.DateOnly) + " (daily budget)"
	} else {
		v.Period = "in " + s.First.Format("January 2006") + " (monthly budget, " + s.First.Format(time.DateOnly) +
			" to " + s.Last.Format(time.DateOnly) + ")"
	}
	switch {
	case !s.ForecastOK:
		v.Caveat = s.Withheld + ": no forecast"
	case s.Late != "":
		v.Forecast, v.Caveat = quantity.FormatMoney(s.Forecast, b.Currency), s.Late+": the forecast lacks it"
	default:
		v.Forecast = quantity.FormatMoney(s.Forecast, b.Currency)
	}
	if s.RunsOutOK {
		v.RunsOut = s.RunsOut.Format(time.DateOnly)
		v.RanOut = s.Spent.GreaterThanOrEqual(b.Amount)
	}
	v.DriversFrom = a.DriversFrom.Format(time.DateOnly)
	for _, d := range a.Drivers {
		var parts []string
		for _, p := range []string{d.Provider, d.Service, d.Account, d.Model} {
			if p != "" {
				parts = append(parts, label.Clean(p))
			}
		}
		if len(parts) == 0 {
			parts = []string{"(no provider)"}
		}
		v.Drivers = append(v.Drivers, driverLine{Amount: quantity.FormatMoney(d.Amount, d.Currency), Slice: strings.Join(parts, " · ")})
	}
	return v
}

func (v alertView) text() string {
	var t strings.Builder
	t.WriteString("Budget “" + v.Name + "” " + v.Headline + ".\n\n")
	t.WriteString("Spent: " + v.Spent + " " + v.Period + ".\n")
	if v.Forecast != "" {
		t.WriteString("Forecast for the period: " + v.Forecast + ".")
	}
	if v.Caveat != "" {
		t.WriteString(" (" + v.Caveat + ".)")
	}
	switch {
	case v.RanOut:
		t.WriteString(" It ran out on " + v.RunsOut + ".")
	case v.RunsOut != "":
		t.WriteString(" At this rate it runs out on " + v.RunsOut + ".")
	}
	t.WriteString("\nScope: " + v.Scope + ".\n")
	if len(v.Drivers) > 0 {
		t.WriteString("\nLargest costs since " + v.DriversFrom + ":\n")
		for _, d := range v.Drivers {
			t.WriteString("  " + d.Amount + "  " + d.Slice + "\n")
		}
	}
	t.WriteString("\nSee where it goes: " + v.Link + "\n")
	return t.String()
}

func (a Alert) payload(link string) map[string]any {
	s := a.Status
	b := s.Budget
	drivers := make([]map[string]any, 0, len(a.Drivers))
	for _, d := range a.Drivers {
		drivers = append(drivers, map[string]any{"provider": d.Provider, "service": d.Service, "account": d.Account,
			"model": d.Model, "currency": d.Currency, "amount": d.Amount.String()})
	}
	var runsOut, forecast, late any
	if s.RunsOutOK {
		runsOut = s.RunsOut.Format(time.DateOnly)
	}
	if s.ForecastOK {
		forecast = s.Forecast.String()
	}
	if s.Late != "" || !s.ForecastOK {
		late = s.Late + s.Withheld
	}
	return map[string]any{
		"kind":   AlertKind,
		"org_id": a.OrgID,
		"budget": map[string]any{"id": b.ID, "name": b.Name, "amount": b.Amount.String(), "currency": b.Currency,
			"period": b.Period, "scope": b.Scope, "thresholds": b.Thresholds},
		"threshold":     a.Threshold,
		"thresholds":    a.Thresholds,
		"period_start":  s.First.Format(time.DateOnly),
		"period_end":    s.Last.Format(time.DateOnly),
		"spent":         s.Spent.String(),
		"percent":       s.Percent,
		"remaining":     s.Remaining.String(),
		"forecast":      forecast, // null when withheld: the data is too old
		"data_note":     late,
		"runs_out_on":   runsOut,
		"drivers_since": a.DriversFrom.Format(time.DateOnly),
		"drivers":       drivers,
		"link":          link,
		"at":            a.At.UTC().Format(time.RFC3339),
	}
}

// percents lists thresholds as "50%", "50% and 80%", "50%, 80% and 100%".
func percents(ts []int) string {
	var ps []string
	for _, t := range ts {
		ps = append(ps, strconv.Itoa(t)+"%")
	}
	if len(ps) <= 1 {
		return strings.Join(ps, "")
	}
	return strings.Join(ps[:len(ps)-1], ", ") + " and " + ps[len(ps)-1]
}

// scopeText says what spend a budget counts.
func scopeText(sc store.BudgetScope, currency string) string {
	var parts []string
	for _, p := range []struct{ k, v string }{{"provider", sc.Provider}, {"service", sc.Service}, {"account", sc.Account},
		{"team", sc.Team}, {"model", sc.Model}, {"source", sc.Source}} {
		if p.v != "" {
			parts = append(parts, p.k+"="+label.Clean(p.v))
		}
	}
	keys := make([]string, 0, len(sc.Tags))
	for k := range sc.Tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, "tag "+label.Clean(k)+"="+label.Clean(sc.Tags[k]))
	}
	if len(parts) == 0 {
		return "all spend in " + currency
	}
	return strings.Join(parts, ", ") + ", in " + currency
}
