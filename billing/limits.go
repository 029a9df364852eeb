package billing

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// LimitError is a request the org's plan does not allow: it names the limit
// and where to upgrade. Nothing was written.
type LimitError struct {
	Limit string // seats, rows, history
	Plan  Plan
	Msg   string
	// UpgradeURL is the billing page, absolute.
	UpgradeURL string
}

func (e *LimitError) Error() string { return e.Msg + " Upgrade at " + e.UpgradeURL }

// HTTPStatus is 402 Payment Required: a plan allows it, this one does not.
func (e *LimitError) HTTPStatus() int { return http.StatusPaymentRequired }

func (c Config) limitError(limit string, p Plan, format string, args ...any) *LimitError {
	return &LimitError{Limit: limit, Plan: p, Msg: fmt.Sprintf(format, args...), UpgradeURL: c.BaseURL + UpgradePath}
}

func group(n int64) string { return quantity.Group(strconv.FormatInt(n, 10)) }

// CheckInvite refuses an invite that would take org past its plan's seats:
// its members and open invites already fill them. st may be fenced to the org.
func (c Config) CheckInvite(ctx context.Context, st *store.Store, org store.Org) error {
	p := c.PlanOf(org)
	if p.Seats == 0 {
		return nil
	}
	members, invites, err := st.SeatsTaken(ctx, org.ID)
	if err != nil {
		return err
	}
	if SeatsUsed(members, invites) < p.Seats {
		return nil
	}
	return c.limitError("seats", p, "The %s plan has %s seat%s besides the org's first member, and %s has %s member%s and %s open invite%s: the seat limit is reached.",
		p.Title, group(p.Seats), plural(p.Seats), org.Name, group(members), plural(members), group(invites), plural(invites))
}

// SeatsUsed is the seats members and open invites take: all but the first
// member, who made the org.
func SeatsUsed(members, invites int64) int64 { return max(members-1, 0) + invites }

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// MonthStart is the first instant of now's calendar month in org's time
// zone: where the monthly row quota starts counting.
func MonthStart(org store.Org, now time.Time) time.Time {
	t := now.In(org.Location())
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
}

// RowsLeft is what org may still import this month: left < 0 means no limit.
// st may be fenced to the org, or a transaction.
func (c Config) RowsLeft(ctx context.Context, st *store.Store, org store.Org, now time.Time) (left, used int64, err error) {
	p := c.PlanOf(org)
	if p.RowsMonth == 0 {
		return -1, 0, nil
	}
	used, err = st.RowsImportedSince(ctx, org.ID, MonthStart(org, now))
	if err != nil {
		return 0, 0, err
	}
	return max(p.RowsMonth-used, 0), used, nil
}

// RowsRefused is the error for a file of at least rows rows (0: not read
// yet) that does not fit in what org has left this month.
func (c Config) RowsRefused(org store.Org, used, rows int64) *LimitError {
	p := c.PlanOf(org)
	file := ""
	if rows > 0 {
		file = fmt.Sprintf(" This file has at least %s rows, and %s are left this month.", group(rows), group(max(p.RowsMonth-used, 0)))
	}
	return c.limitError("rows", p, "The %s plan imports up to %s charge rows a month, and %s has imported %s this month.%s Nothing was imported.",
		p.Title, group(p.RowsMonth), org.Name, group(used), file)
}

// CheckHistory refuses a dashboard or API range that starts before org's
// plan's history window: from is the range's first day and today the org's
// today (both dates at midnight UTC, as the dashboard keeps days).
func (c Config) CheckHistory(org store.Org, from, today time.Time) error {
	p := c.PlanOf(org)
	if p.HistoryDays == 0 {
		return nil
	}
	earliest := today.AddDate(0, 0, -p.HistoryDays)
	if !from.Before(earliest) {
		return nil
	}
	return c.limitError("history", p, "The %s plan shows the last %d days of spend (from %s); this range starts on %s. Nothing was deleted: every day comes back on a plan with a longer history.",
		p.Title, p.HistoryDays, earliest.Format(time.DateOnly), from.Format(time.DateOnly))
}

// Notifies reports whether org's plan sends the daily digest and budget
// alerts.
func (c Config) Notifies(org store.Org) bool { return c.PlanOf(org).Notifications }

// Usage is an org's use of its plan's limits, for the billing page.
type Usage struct {
	Plan            Plan
	Members         int64
	Invites         int64
	RowsThisMonth   int64
	MonthStart      time.Time
	HistoryDays     int
	HistoryEarliest time.Time // zero: unlimited
}

// UsageOf measures org's usage; st may be fenced to the org.
func (c Config) UsageOf(ctx context.Context, st *store.Store, org store.Org, now time.Time) (Usage, error) {
	u := Usage{Plan: c.PlanOf(org), MonthStart: MonthStart(org, now)}
	var err error
	if u.Members, u.Invites, err = st.SeatsTaken(ctx, org.ID); err != nil {
		return u, err
	}
	if u.RowsThisMonth, err = st.RowsImportedSince(ctx, org.ID, u.MonthStart); err != nil {
		return u, err
	}
	u.HistoryDays = u.Plan.HistoryDays
	if u.HistoryDays > 0 {
		t := now.In(org.Location())
		today := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		u.HistoryEarliest = today.AddDate(0, 0, -u.HistoryDays)
	}
	return u, nil
}

// RowQuota is ingest.Importer.RowQuota for this install: the org's plan's
// monthly row quota, none with billing off.
func (s *Service) RowQuota(ctx context.Context, st *store.Store, org store.Org) (ingest.Quota, error) {
	c := s.Cfg()
	left, used, err := c.RowsLeft(ctx, st, org, s.nowOrReal())
	if err != nil {
		return ingest.Quota{}, err
	}
	return ingest.Quota{Left: left, Refuse: func(rows int64) error { return c.RowsRefused(org, used, rows) }}, nil
}

func (s *Service) nowOrReal() time.Time {
	if s == nil {
		return time.Now()
	}
	return s.now()
}
