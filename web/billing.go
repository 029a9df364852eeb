package web

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/web/views"
)

// isStripeWebhook is the one request exempt from CSRF for its signature.
func isStripeWebhook(c echo.Context) bool {
	return c.Request().Method == http.MethodPost && c.Request().URL.Path == "/billing/webhook"
}

// billingBanner is the failed-payment notice for owners, nil when there is
// nothing to say (or billing is off).
func (s *Server) billingBanner(c echo.Context) *views.BillingBanner {
	org := currentOrg(c)
	if !s.billing.Enabled() || org == nil || currentRole(c) != access.Owner {
		return nil
	}
	if org.PlanStatus != billing.StatusPastDue && org.PlanStatus != billing.StatusUnpaid {
		return nil
	}
	b, err := s.db(c).OrgBilling(c.Request().Context(), org.ID)
	if err != nil {
		return nil // the page still renders, without the notice
	}
	return &views.BillingBanner{Status: b.PlanStatus, GraceUntil: b.GraceUntil}
}

func (s *Server) handleBillingShow(c echo.Context) error {
	return s.billingPage(c, "")
}

// handleBillingSuccess is where Checkout returns after payment. The plan
// changes when Stripe's webhook says so, not here: this page's URL proves
// nothing.
func (s *Server) handleBillingSuccess(c echo.Context) error {
	return s.billingPage(c, "success")
}

func (s *Server) handleBillingCancel(c echo.Context) error {
	return s.billingPage(c, "cancel")
}

func (s *Server) billingPage(c echo.Context, outcome string) error {
	ctx := c.Request().Context()
	org := currentOrg(c)
	cfg := s.billing.Cfg()
	u, err := cfg.UsageOf(ctx, s.db(c), *org, s.now())
	if err != nil {
		return err
	}
	v := views.BillingView{
		Enabled: cfg.Enabled(), PlanTitle: u.Plan.Title, Status: org.PlanStatus, Outcome: outcome,
		HistoryDays: u.HistoryDays, Notifications: u.Plan.Notifications,
		Usage: []views.Usage{
			{Label: "Seats", Used: billing.SeatsUsed(u.Members, u.Invites), Limit: u.Plan.Seats, Unit: "seats (members besides the first, and open invites)", Key: "seats"},
			{Label: "Rows imported this month", Used: u.RowsThisMonth, Limit: u.Plan.RowsMonth, Unit: "rows since " + u.MonthStart.Format("2 January"), Key: "rows"},
		},
	}
	if u.HistoryDays > 0 {
		v.HistoryFrom = u.HistoryEarliest.Format(time.DateOnly)
	}
	if cfg.Enabled() {
		b, err := s.db(c).OrgBilling(ctx, org.ID)
		if err != nil {
			return err
		}
		v.RenewsAt, v.GraceUntil, v.HasCustomer = b.RenewsAt, b.GraceUntil, b.CustomerID != ""
		for _, p := range billing.Plans {
			v.Offers = append(v.Offers, views.PlanOffer{Name: p.Name, Title: p.Title, Limits: planLimits(p), Current: p.Name == u.Plan.Name})
		}
	}
	return render(c, http.StatusOK, views.BillingPage(s.shell(c, "Billing", "settings"), v))
}

// planLimits says what a plan allows, in a line.
func planLimits(p billing.Plan) string {
	n := func(v int64) string { return quantity.Group(strconv.FormatInt(v, 10)) }
	out := "you and " + n(p.Seats) + " more, " + n(p.RowsMonth) + " rows a month, "
	if p.HistoryDays > 0 {
		out += strconv.Itoa(p.HistoryDays) + " days of history"
	} else {
		out += "all history"
	}
	if p.Notifications {
		out += ", daily digest and budget alerts"
	}
	return out
}

// handleBillingCheckout sends an owner to Stripe Checkout for a plan.
func (s *Server) handleBillingCheckout(c echo.Context) error {
	if !s.billing.Enabled() {
		return echo.ErrNotFound
	}
	plan, interval := c.FormValue("plan"), c.FormValue("interval")
	if _, err := s.billing.Prices.ID(plan, interval); err != nil {
		return unprocessable("Choose the Team or Business plan, billed monthly or yearly.")
	}
	url, err := s.billing.Checkout(c.Request().Context(), s.db(c), *currentOrg(c), currentUser(c).Email, plan, interval)
	if err != nil {
		return s.stripeFailed(c, "checkout", err)
	}
	return c.Redirect(http.StatusSeeOther, url)
}

// handleBillingPortal sends an owner to Stripe's Billing Portal: change or
// cancel the plan, the card, the invoices.
func (s *Server) handleBillingPortal(c echo.Context) error {
	if !s.billing.Enabled() {
		return echo.ErrNotFound
	}
	url, err := s.billing.Portal(c.Request().Context(), s.db(c), *currentOrg(c), currentUser(c).Email)
	if err != nil {
		return s.stripeFailed(c, "portal", err)
	}
	return c.Redirect(http.StatusSeeOther, url)
}

// handleBillingInvoices lists the org's latest invoices from Stripe.
func (s *Server) handleBillingInvoices(c echo.Context) error {
	if !s.billing.Enabled() {
		return echo.ErrNotFound
	}
	invs, err := s.billing.Invoices(c.Request().Context(), s.db(c), *currentOrg(c))
	if err != nil {
		return s.stripeFailed(c, "invoices", err)
	}
	rows := make([]views.InvoiceRow, len(invs))
	for i, in := range invs {
		places := int32(2)
		if in.Amount.Exponent() == 0 {
			places = 0
		}
		rows[i] = views.InvoiceRow{Number: in.Number, Date: in.Created.UTC().Format(time.DateOnly),
			Amount: quantity.Group(in.Amount.StringFixed(places)) + " " + in.Currency, Status: in.Status, URL: in.URL, PDF: in.PDF}
	}
	return render(c, http.StatusOK, views.InvoicesPage(s.shell(c, "Invoices", "settings"), rows))
}

// stripeFailed logs a failed call to Stripe and tells the owner to retry.
func (s *Server) stripeFailed(c echo.Context, what string, err error) error {
	s.log.ErrorContext(c.Request().Context(), "stripe call failed", slog.String("call", what),
		slog.Int64("org_id", currentOrg(c).ID), slog.Any("error", err))
	return echo.NewHTTPError(http.StatusBadGateway, "Stripe did not answer as expected; nothing was charged. Please try again in a minute.")
}

// handleStripeWebhook receives Stripe's events (docs/billing.md): verified
// by signature, stored by id, applied once.
func (s *Server) handleStripeWebhook(c echo.Context) error {
	if !s.billing.Enabled() {
		return echo.ErrNotFound
	}
	req := c.Request()
	payload, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, billing.MaxWebhookBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "a Stripe event is at most 256 KiB")
		}
		return echo.NewHTTPError(http.StatusBadRequest, "the body could not be read")
	}
	res, err := s.billing.HandleWebhook(req.Context(), payload, req.Header.Get("Stripe-Signature"))
	if errors.Is(err, billing.ErrBadEvent) {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": strings.TrimPrefix(err.Error(), "billing: ")})
	}
	if errors.Is(err, billing.ErrBadSignature) {
		s.log.WarnContext(req.Context(), "stripe webhook refused: the signature does not verify",
			slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
			slog.String("remote", c.RealIP()), slog.Any("error", err))
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "the Stripe-Signature does not verify"})
	}
	if err != nil {
		return err // 500: Stripe delivers it again
	}
	s.log.InfoContext(req.Context(), "stripe webhook", slog.String("event_id", res.EventID), slog.String("type", res.Type),
		slog.Bool("duplicate", res.Duplicate), slog.Int64("org_id", res.OrgID), slog.String("note", res.Note))
	return c.JSON(http.StatusOK, map[string]any{"received": true, "duplicate": res.Duplicate})
}
