package ingest

import (
	"fmt"
	"strings"
	"time"

	"github.com/burnrate/burnrate/quantity"
)

// genericParser reads any CSV through a saved column Mapping.
type genericParser struct {
	m                                      Mapping
	date, cost, currency, service, account int
	provider                               int
	providerLiteral                        string
	tags                                   []tagCol
}

func newGeneric(h *header, o *Options) (parser, error) {
	if o.Mapping == nil {
		return nil, fmt.Errorf("%w: the generic source needs a column mapping", ErrBadMapping)
	}
	m := *o.Mapping
	p := &genericParser{m: m, date: h.col(m.Date), cost: h.col(m.Cost), currency: -1, service: -1, account: -1, provider: -1}
	if m.Date == "" || p.date < 0 {
		return nil, &ParseError{Err: ErrMissingColumn, Msg: fmt.Sprintf("%q (the mapping's date column)", m.Date)}
	}
	if m.Cost == "" || p.cost < 0 {
		return nil, &ParseError{Err: ErrMissingColumn, Msg: fmt.Sprintf("%q (the mapping's cost column)", m.Cost)}
	}
	h.need(p.date, p.cost)
	optional := func(name, what string) (int, error) {
		if name == "" {
			return -1, nil
		}
		i := h.col(name)
		if i < 0 {
			return -1, &ParseError{Err: ErrMissingColumn, Msg: fmt.Sprintf("%q (the mapping's %s column)", name, what)}
		}
		return i, nil
	}
	var err error
	if p.currency, err = optional(m.Currency, "currency"); err != nil {
		return nil, err
	}
	if m.DecimalSeparator != "" && m.DecimalSeparator != "." && m.DecimalSeparator != "," {
		return nil, fmt.Errorf("%w: the decimal separator is \".\" or \",\", not %q", ErrBadMapping, m.DecimalSeparator)
	}
	if p.currency < 0 && m.DefaultCurrency == "" {
		return nil, fmt.Errorf("%w: set a currency column or a default currency", ErrBadMapping)
	}
	if p.service, err = optional(m.Service, "service"); err != nil {
		return nil, err
	}
	if p.account, err = optional(m.Account, "account"); err != nil {
		return nil, err
	}
	if m.Provider != "" {
		if p.provider = h.col(m.Provider); p.provider < 0 {
			p.providerLiteral = m.Provider
		}
	}
	for _, t := range m.Tags {
		i, err := optional(t, "tag")
		if err != nil {
			return nil, err
		}
		p.tags = append(p.tags, tagCol{i, h.names[i]})
	}
	return p, nil
}

func (p *genericParser) parse(c *rowCtx, row *Row) error {
	var err error
	if p.m.DateFormat != "" {
		s := c.text(p.date)
		t, perr := time.Parse(p.m.DateFormat, s)
		if perr != nil {
			if s == "" {
				return c.errAt(p.date, ErrEmptyValue, "a date is required")
			}
			return c.errAt(p.date, ErrNotDate, "expected the format "+p.m.DateFormat)
		}
		if err := c.inRange(p.date, t); err != nil {
			return err
		}
		row.ChargePeriodStart = t.UTC()
	} else if row.ChargePeriodStart, err = c.time(p.date); err != nil {
		return err
	}
	row.ChargePeriodEnd = endOrDay(row.ChargePeriodStart, time.Time{})
	row.BillingPeriodStart = monthStart(row.ChargePeriodStart)
	// Costs in a hand-made or spreadsheet CSV are written as people write
	// money: "$10,100.00", "1.234,56 €", "(12.50)".
	if s := c.text(p.cost); s != "" {
		d, err := quantity.Money.ParseFormatted("", s, p.m.DecimalSeparator == ",")
		if err != nil {
			return c.numberErr(p.cost, err)
		}
		row.BilledCost = d
	}
	row.EffectiveCost, row.ListCost = row.BilledCost, row.BilledCost
	row.BillingCurrency = strings.ToUpper(c.text(p.currency))
	if row.BillingCurrency == "" {
		row.BillingCurrency = strings.ToUpper(p.m.DefaultCurrency)
	}
	if row.BillingCurrency == "" {
		return c.errAt(p.currency, ErrEmptyValue, "a currency is required (or set a default currency)")
	}
	row.ChargeCategory = ChargeUsage
	if row.BilledCost.Sign() < 0 {
		row.ChargeCategory = ChargeCredit
	}
	row.ServiceName = c.text(p.service)
	row.SubAccountID = c.text(p.account)
	row.ProviderName = p.providerLiteral
	if p.provider >= 0 {
		row.ProviderName = c.text(p.provider)
	}
	row.ServiceCategory = "Other"
	for _, t := range p.tags {
		c.tag(t.key, c.text(t.idx))
	}
	return nil
}

// DateFormat is a date layout the mapping page offers, shown by example.
type DateFormat struct {
	Layout  string // a Go time layout, as Mapping.DateFormat holds it
	Example string // 31 January 2026, 13:45 UTC, in that layout
}

// DateFormats are the layouts offered for the generic mapping, each shown
// as the date it writes for 31 January 2026 (docs/import-formats.md,
// generic). An empty layout reads the shapes of the known formats.
func DateFormats() []DateFormat {
	ex := time.Date(2026, 1, 31, 13, 45, 0, 0, time.UTC)
	var out []DateFormat
	for _, l := range []string{"2006-01-02", "02/01/2006", "01/02/2006", "02.01.2006", "2006-01-02T15:04:05Z07:00",
		"2006-01-02 15:04:05", "02/01/2006 15:04", "01/02/2006 15:04", "2006/01/02", "20060102", "02-Jan-2006", "Jan 2, 2006"} {
		out = append(out, DateFormat{Layout: l, Example: ex.Format(l)})
	}
	return out
}
