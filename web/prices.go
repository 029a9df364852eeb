package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// maxPriceListBytes caps an uploaded price list: the shipped one is 60 kB.
const maxPriceListBytes = 5 << 20

func (s *Server) handlePrices(c echo.Context) error {
	return s.pricesPage(c, http.StatusOK, views.PricesView{})
}

// pricesPage renders the prices page with v's form state and error.
func (s *Server) pricesPage(c echo.Context, status int, v views.PricesView) error {
	ctx := c.Request().Context()
	st, orgID := s.db(c), currentOrg(c).ID
	var err error
	if v.GPU, err = st.GPUPriceOverrides(ctx, orgID); err != nil {
		return err
	}
	if v.LLM, err = st.LLMPriceOverrides(ctx, orgID); err != nil {
		return err
	}
	to := s.now().UTC()
	from := to.Add(-advisor.PaidWindow)
	if v.Paid, err = st.PaidGPURates(ctx, orgID, from, to); err != nil {
		return err
	}
	v.PaidWindow = from.Format(time.DateOnly) + " to " + to.Format(time.DateOnly)
	p, _ := advisor.LoadOrgPrices(ctx, nil, 0, advisor.PriceCatalog, to)
	v.Prices = priceInfo(p)
	v.CatalogNote = map[int64]string{}
	cat := pricing.DefaultCatalog()
	for _, o := range v.GPU {
		base, ok := cat.Instance(o.Provider, o.InstanceType)
		switch {
		case ok && base.OnDemand != nil:
			v.CatalogNote[o.ID] = "catalog on-demand $" + base.OnDemand.StringFixed(2) + "/h"
		case ok:
			v.CatalogNote[o.ID] = "in the catalog, spot only"
		default:
			mine := cat.WithPrices(advisor.GPUInstances([]store.GPUPriceOverride{o}), "x")
			if in, _ := mine.Instance(o.Provider, o.InstanceType); len(in.Flags) > 0 || in.GPU == "" {
				v.CatalogNote[o.ID] = "not in the catalog and its GPU is unknown: not used by the advisor"
			} else {
				v.CatalogNote[o.ID] = fmt.Sprintf("new instance: %g× %s", in.GPUCount, in.GPU)
			}
		}
	}
	return render(c, status, views.PricesPage(s.shell(c, "Prices", "prices"), v))
}

// optionalPrice reads a price field: empty is none; otherwise a positive
// decimal (a leading $ is fine).
func optionalPrice(raw, label string) (*decimal.Decimal, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, nil
	}
	d, err := quantity.Price.ParseHuman(label, s)
	if errors.Is(err, quantity.ErrOutOfRange) && !strings.HasPrefix(s, "-") {
		return nil, err
	}
	if err != nil || !d.IsPositive() {
		return nil, fmt.Errorf("%s: %q is not a positive price", label, raw)
	}
	return &d, nil
}

// handleGPUOverrideCreate adds or replaces one GPU price.
func (s *Server) handleGPUOverrideCreate(c echo.Context) error {
	f := views.GPUOverrideForm{
		Provider: strings.TrimSpace(c.FormValue("provider")), InstanceType: strings.TrimSpace(c.FormValue("instance_type")),
		GPU: strings.TrimSpace(c.FormValue("gpu")), GPUCount: strings.TrimSpace(c.FormValue("gpu_count")),
		OnDemand: c.FormValue("on_demand"), Spot: c.FormValue("spot"), Note: strings.TrimSpace(c.FormValue("note")),
	}
	fail := func(msg string) error {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{GPUForm: f, Error: msg})
	}
	if f.Provider == "" || f.InstanceType == "" {
		return fail("Give the provider and the instance type.")
	}
	in := store.GPUPriceOverrideInput{Provider: f.Provider, InstanceType: f.InstanceType, GPU: f.GPU, Note: f.Note}
	var err error
	if in.OnDemand, err = optionalPrice(f.OnDemand, "On-demand"); err != nil {
		return fail(err.Error())
	}
	if in.Spot, err = optionalPrice(f.Spot, "Spot"); err != nil {
		return fail(err.Error())
	}
	if in.OnDemand == nil && in.Spot == nil {
		return fail("Give an on-demand or a spot price.")
	}
	if f.GPUCount != "" {
		n, err := quantity.GPUs.ParseHuman("GPUs", f.GPUCount)
		if errors.Is(err, quantity.ErrOutOfRange) && !strings.HasPrefix(f.GPUCount, "-") {
			return fail(err.Error())
		}
		if err != nil || !n.IsPositive() {
			return fail(fmt.Sprintf("GPUs: %q is not a positive number.", f.GPUCount))
		}
		in.GPUCount = n
	}
	if _, _, ok := pricing.DefaultCatalog().InstanceGPU(strings.ToLower(f.Provider), f.InstanceType); !ok && (f.GPU == "" || in.GPUCount.IsZero()) {
		return fail(fmt.Sprintf("%s %s is not in the catalog: give its GPU and GPU count.", f.Provider, f.InstanceType))
	}
	err = s.savingsInputsChange(c, func(st *store.Store) error {
		_, err := st.UpsertGPUPriceOverrides(c.Request().Context(), currentOrg(c).ID, currentUser(c).ID, []store.GPUPriceOverrideInput{in})
		return err
	})
	if err != nil {
		return err
	}
	s.flash(c, "Saved your price for "+f.Provider+" "+f.InstanceType+".")
	return c.Redirect(http.StatusSeeOther, "/prices")
}

// handleGPUOverrideUpload replaces the org's prices for every instance in
// an uploaded gpu_prices.csv-shaped file, all or nothing.
func (s *Server) handleGPUOverrideUpload(c echo.Context) error {
	fh, err := c.FormFile("file")
	if err != nil {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: "Choose a CSV file to upload."})
	}
	if fh.Size > maxPriceListBytes {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: "That file is larger than 5 MB; a price list is much smaller."})
	}
	file, err := fh.Open()
	if err != nil {
		return err
	}
	defer file.Close()
	rows, err := pricing.ParseInstancePricesCSV(file)
	if err != nil {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: fh.Filename + ": " + err.Error() + ". Nothing was saved."})
	}
	if len(rows) == 0 {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: fh.Filename + ": no rows below the header."})
	}
	in := make([]store.GPUPriceOverrideInput, 0, len(rows))
	for _, r := range rows {
		note := r.Source
		if note == "" {
			note = "uploaded from " + fh.Filename
		}
		in = append(in, store.GPUPriceOverrideInput{
			Provider: r.Provider, InstanceType: r.InstanceType, GPU: r.GPU, GPUCount: decimal.NewFromFloat(r.GPUCount),
			OnDemand: r.OnDemand, Spot: r.Spot, Note: note,
		})
	}
	var n int
	err = s.savingsInputsChange(c, func(st *store.Store) (err error) {
		n, err = st.UpsertGPUPriceOverrides(c.Request().Context(), currentOrg(c).ID, currentUser(c).ID, in)
		return err
	})
	if err != nil {
		return err
	}
	s.flash(c, fmt.Sprintf("Saved %d GPU price(s) from %s.", n, fh.Filename))
	return c.Redirect(http.StatusSeeOther, "/prices")
}

// handleGPUOverrideUpdate edits one GPU price in place.
func (s *Server) handleGPUOverrideUpdate(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ctx, orgID := c.Request().Context(), currentOrg(c).ID
	o, err := s.db(c).GPUPriceOverride(ctx, orgID, id)
	if err != nil {
		return err
	}
	onDemand, err1 := optionalPrice(c.FormValue("on_demand"), "On-demand")
	spot, err2 := optionalPrice(c.FormValue("spot"), "Spot")
	if err := errors.Join(err1, err2); err != nil {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: o.Provider + " " + o.InstanceType + ": " + strings.ReplaceAll(err.Error(), "\n", "; ")})
	}
	if onDemand == nil && spot == nil {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: o.Provider + " " + o.InstanceType + ": give an on-demand or a spot price, or delete the row."})
	}
	err = s.savingsInputsChange(c, func(st *store.Store) error {
		_, err := st.UpdateGPUPriceOverride(ctx, orgID, id, currentUser(c).ID, onDemand, spot, strings.TrimSpace(c.FormValue("note")))
		return err
	})
	if err != nil {
		return err
	}
	s.flash(c, "Saved your price for "+o.Provider+" "+o.InstanceType+".")
	return c.Redirect(http.StatusSeeOther, "/prices")
}

func (s *Server) handleGPUOverrideDelete(c echo.Context) error {
	return s.deleteOverride(c, func(ctx context.Context, st *store.Store, orgID, id int64) (string, error) {
		o, err := st.GPUPriceOverride(ctx, orgID, id)
		if err != nil {
			return "", err
		}
		return o.Provider + " " + o.InstanceType + "; the catalog's applies again", st.DeleteGPUPriceOverride(ctx, orgID, id)
	})
}

// deleteOverride is the delete handler of both kinds of price override:
// del deletes, through st, the org's row the path's id names
// (store.ErrNotFound, a 404, when the org has none) and returns what the
// flash says was deleted.
func (s *Server) deleteOverride(c echo.Context, del func(ctx context.Context, st *store.Store, orgID, id int64) (what string, err error)) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var what string
	err = s.savingsInputsChange(c, func(st *store.Store) (err error) {
		what, err = del(c.Request().Context(), st, currentOrg(c).ID, id)
		return err
	})
	if err != nil {
		return err
	}
	s.flash(c, "Deleted your price for "+what+".")
	return c.Redirect(http.StatusSeeOther, "/prices")
}

// llmOverrideInput reads an LLM price form; problem, when not empty, says
// what to fix.
func llmOverrideInput(c echo.Context) (f views.LLMOverrideForm, in store.LLMPriceOverrideInput, problem string) {
	f = views.LLMOverrideForm{
		Model: strings.TrimSpace(c.FormValue("model")), Provider: strings.TrimSpace(c.FormValue("provider")),
		Input: c.FormValue("input"), Output: c.FormValue("output"), Cached: c.FormValue("cached"), Note: strings.TrimSpace(c.FormValue("note")),
	}
	in = store.LLMPriceOverrideInput{Model: f.Model, Provider: f.Provider, Note: f.Note}
	if f.Model == "" || len(f.Model) > 200 {
		return f, in, "Give the model name as your logs or bills spell it."
	}
	price := func(raw, label string) (decimal.Decimal, error) {
		d, err := quantity.Price.ParseHuman(label, raw)
		if errors.Is(err, quantity.ErrOutOfRange) && !strings.HasPrefix(strings.TrimSpace(raw), "-") {
			return d, err
		}
		if err != nil {
			return d, fmt.Errorf("%s: %q is not a price per 1M tokens", label, raw)
		}
		return d, nil
	}
	var err1, err2, err3 error
	in.Input, err1 = price(f.Input, "Input")
	in.Output, err2 = price(f.Output, "Output")
	if strings.TrimSpace(f.Cached) != "" {
		var d decimal.Decimal
		d, err3 = price(f.Cached, "Cached input")
		in.CachedInput = &d
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		return f, in, strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return f, in, ""
}

func (s *Server) handleLLMOverrideCreate(c echo.Context) error {
	f, in, problem := llmOverrideInput(c)
	if problem != "" {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{LLMForm: f, Error: problem})
	}
	err := s.savingsInputsChange(c, func(st *store.Store) error {
		_, err := st.UpsertLLMPriceOverride(c.Request().Context(), currentOrg(c).ID, currentUser(c).ID, in)
		return err
	})
	if err != nil {
		return err
	}
	s.flash(c, "Saved your price for "+in.Model+".")
	return c.Redirect(http.StatusSeeOther, "/prices")
}

func (s *Server) handleLLMOverrideUpdate(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ctx, orgID := c.Request().Context(), currentOrg(c).ID
	if _, err := s.db(c).LLMPriceOverride(ctx, orgID, id); err != nil {
		return err
	}
	_, in, problem := llmOverrideInput(c)
	if problem != "" {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: problem})
	}
	err = s.savingsInputsChange(c, func(st *store.Store) error {
		_, err := st.UpdateLLMPriceOverride(ctx, orgID, id, currentUser(c).ID, in)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return s.pricesPage(c, http.StatusUnprocessableEntity, views.PricesView{Error: "You already have a price for " + in.Model + "; edit that row instead."})
	}
	if err != nil {
		return err
	}
	s.flash(c, "Saved your price for "+in.Model+".")
	return c.Redirect(http.StatusSeeOther, "/prices")
}

func (s *Server) handleLLMOverrideDelete(c echo.Context) error {
	return s.deleteOverride(c, func(ctx context.Context, st *store.Store, orgID, id int64) (string, error) {
		o, err := st.LLMPriceOverride(ctx, orgID, id)
		if err != nil {
			return "", err
		}
		return o.Model, st.DeleteLLMPriceOverride(ctx, orgID, id)
	})
}
