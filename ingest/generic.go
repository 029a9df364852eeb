package ingest

import (
	"fmt"
	"strings"
	"time"
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
	if row.BilledCost, err = c.money(p.cost); err != nil {
		return err
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
