package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

func (s *Server) importsPage(c echo.Context, status int, outcomes []views.ImportOutcome) error {
	history, err := s.db(c).Imports(c.Request().Context(), currentOrg(c).ID, ingest.HistoryLength)
	if err != nil {
		return err
	}
	return render(c, status, views.ImportsPage(s.shell(c, "Imports", "imports"), ingest.SourceNames(), outcomes, history))
}

func (s *Server) handleImports(c echo.Context) error { return s.importsPage(c, http.StatusOK, nil) }

// importRequest builds the request for a file in the current org, with the
// org's column mapping when the generic source is chosen.
func (s *Server) importRequest(c echo.Context, fileName, source, via string) (ingest.ImportRequest, error) {
	req := ingest.ImportRequest{Org: *currentOrg(c), FileName: fileName, Source: ingest.Source(source), Via: via}
	if u := currentUser(c); u != nil {
		req.UploadedBy = u.ID
	}
	// Usage logs without costs are priced at the org's negotiated prices
	// where it has them.
	prices, err := advisor.LoadOrgPrices(c.Request().Context(), s.db(c), req.Org.ID, advisor.PriceOverrides, s.now())
	if err != nil {
		return req, err
	}
	req.Pricer = ingest.PriceTable(prices.LLM)
	if req.Source == ingest.SourceGeneric {
		m, err := s.db(c).ColumnMapping(c.Request().Context(), req.Org.ID)
		if errors.Is(err, store.ErrNotFound) {
			return req, echo.NewHTTPError(http.StatusUnprocessableEntity, "The generic format needs a column mapping: set one up under Imports → column mapping first.")
		}
		if err != nil {
			return req, err
		}
		req.Mapping = ingest.MappingFrom(m)
	}
	return req, nil
}

func outcomeOf(name string, res ingest.ImportResult, err error) views.ImportOutcome {
	o := views.ImportOutcome{FileName: name}
	var ierr *ingest.ImportError
	switch {
	case errors.As(err, &ierr):
		o.Error = ierr.Error()
		if ierr.Preview {
			o.MapURL = "/imports/mapping?import=" + strconv.FormatInt(ierr.ImportID, 10)
		}
	case err != nil:
		o.Error = "The import failed on our side; nothing was imported. Please try again."
	default:
		o.ImportID, o.Source, o.Rows, o.ReplacedRows, o.SkippedRows = res.ID, string(res.Source), res.Rows, res.ReplacedRows, res.SkippedRows
		o.Totals, o.Duplicate, o.ImportedAt = res.Totals, res.Duplicate, res.ImportedAt
		o.MergedRows, o.ShortRows, o.CostBasis = res.MergedRows, res.ShortRows, res.CostBasis
		if res.PeriodStart != nil && res.PeriodEnd != nil {
			o.PeriodStart, o.PeriodEnd = *res.PeriodStart, *res.PeriodEnd
		}
	}
	return o
}

// handleImportUpload imports every file of a browser upload, each in its own
// transaction: one bad file does not stop the others, and says what is wrong
// with it.
func (s *Server) handleImportUpload(c echo.Context) error {
	form, err := c.MultipartForm()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "Choose one or more files to upload.")
	}
	files := form.File["file"]
	if len(files) == 0 {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "Choose one or more files to upload.")
	}
	source := c.FormValue("source")
	var outcomes []views.ImportOutcome
	failed := 0
	for _, fh := range files {
		name := filepath.Base(fh.Filename)
		req, err := s.importRequest(c, name, source, "web")
		if err != nil {
			return err
		}
		f, err := fh.Open()
		if err != nil {
			return err
		}
		var done func()
		req.Progress, done = s.startUploadProgress(currentOrg(c).ID, c.FormValue("upload_key"))
		res, err := s.importer.With(s.db(c)).Import(c.Request().Context(), req, f)
		done()
		f.Close()
		var ierr *ingest.ImportError
		if err != nil && !errors.As(err, &ierr) {
			s.log.Error("import failed", "file", name, "error", err)
		}
		if err != nil {
			failed++
		}
		outcomes = append(outcomes, outcomeOf(name, res, err))
	}
	status := http.StatusOK
	if failed == len(files) {
		status = http.StatusUnprocessableEntity
	}
	if isHTMX(c) {
		history, err := s.db(c).Imports(c.Request().Context(), currentOrg(c).ID, ingest.HistoryLength)
		if err != nil {
			return err
		}
		// htmx swaps only 2xx responses by default: an all-failed upload
		// is still a successful request with outcomes to show.
		return render(c, http.StatusOK, views.UploadOutcomeFragment(outcomes, history))
	}
	return s.importsPage(c, status, outcomes)
}

func (s *Server) handleImportShow(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	imp, err := s.db(c).Import(c.Request().Context(), currentOrg(c).ID, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ImportPage(s.shell(c, "Import", "imports"), imp))
}

// handleImportDelete removes an import and its rows (docs/import-formats.md,
// "Removing an import").
func (s *Server) handleImportDelete(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var imp store.Import
	err = s.savingsInputsChange(c, func(st *store.Store) (err error) {
		imp, err = st.RemoveImport(c.Request().Context(), currentOrg(c).ID, id, currentUser(c).ID, "web")
		return err
	})
	if err != nil {
		return err
	}
	msg := "Import of “" + imp.FileName + "” removed."
	if imp.Status == store.ImportRemoved {
		msg = "Import of “" + imp.FileName + "” removed, with its " + quantity.FormatCount(imp.Rows) + " rows."
	}
	s.flash(c, msg)
	return c.Redirect(http.StatusSeeOther, "/imports")
}

func errUploadTooLarge(limit int64) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
		fmt.Sprintf("The upload is larger than this server's limit of %d MB (MAX_UPLOAD_MB). Split the file or compress it with gzip.", limit>>20))
}

// mappingForm is the column mapping form's fields, trimmed. The provider
// is a column (provider) or, failing that, a fixed name (provider_name);
// tags are checked columns (tag), or one comma-separated field (tags) as
// the form took them before.
func mappingForm(c echo.Context) store.ColumnMapping {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	m := store.ColumnMapping{Date: v("date"), Cost: v("cost"), Currency: v("currency"), Service: v("service"),
		Account: v("account"), Provider: cmpOr(v("provider"), v("provider_name")), DateFormat: v("date_format"),
		DefaultCurrency: strings.ToUpper(v("default_currency")), DecimalSeparator: v("decimal_separator")}
	if m.DecimalSeparator == "." {
		m.DecimalSeparator = ""
	}
	form, _ := c.FormParams()
	for _, t := range form["tag"] {
		if t = strings.TrimSpace(t); t != "" {
			m.Tags = append(m.Tags, t)
		}
	}
	for _, t := range strings.Split(v("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			m.Tags = append(m.Tags, t)
		}
	}
	return m
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// mappingPreview loads the header and first rows a failed import kept
// (?import= or the form's import field), or none.
func (s *Server) mappingPreview(c echo.Context) (views.MappingPreview, error) {
	raw := c.QueryParam("import")
	if raw == "" {
		raw = c.FormValue("import")
	}
	if raw == "" {
		return views.MappingPreview{}, nil
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return views.MappingPreview{}, echo.NewHTTPError(http.StatusNotFound, "No such import.")
	}
	org := currentOrg(c).ID
	imp, err := s.db(c).Import(c.Request().Context(), org, id)
	if err != nil {
		return views.MappingPreview{}, err
	}
	js, err := s.db(c).ImportPreview(c.Request().Context(), org, id)
	if errors.Is(err, store.ErrNotFound) {
		return views.MappingPreview{}, echo.NewHTTPError(http.StatusNotFound, "That import kept no columns to map: upload the file, and if its format is unknown, map it from the error.")
	}
	if err != nil {
		return views.MappingPreview{}, err
	}
	var p ingest.Preview
	if err := json.Unmarshal(js, &p); err != nil {
		return views.MappingPreview{}, err
	}
	return views.MappingPreview{ImportID: id, FileName: imp.FileName, Header: p.Header, Rows: p.Rows}, nil
}

func (s *Server) mappingPage(c echo.Context, status int, m store.ColumnMapping, problem string, saved bool) error {
	p, err := s.mappingPreview(c)
	if err != nil {
		return err
	}
	return render(c, status, views.MappingPage(s.shell(c, "Column mapping", "imports"), m, p, dateFormats(), problem, saved))
}

// dateFormats are the mapping page's date formats, by example.
func dateFormats() []views.DateFormat {
	var out []views.DateFormat
	for _, f := range ingest.DateFormats() {
		out = append(out, views.DateFormat{Layout: f.Layout, Example: f.Example})
	}
	return out
}

func (s *Server) handleMappingShow(c echo.Context) error {
	m, err := s.db(c).ColumnMapping(c.Request().Context(), currentOrg(c).ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.mappingPage(c, http.StatusOK, m, "", false)
}

func (s *Server) handleMappingSave(c echo.Context) error {
	m := mappingForm(c)
	p, err := s.mappingPreview(c)
	if err != nil {
		return err
	}
	problem := ""
	switch {
	case m.Date == "" || m.Cost == "":
		problem = "Choose at least the date column and the cost column."
	case m.Currency == "" && len(m.DefaultCurrency) != 3:
		problem = "Choose the currency column, or give a three-letter default currency such as USD."
	case m.DecimalSeparator != "" && m.DecimalSeparator != ",":
		problem = "The decimal separator is a point (1,234.56) or a comma (1.234,56)."
	case len(p.Header) > 0 && !p.Has(m.Date, m.Cost, m.Currency, m.Service, m.Account):
		problem = "Choose columns of " + p.FileName + "."
	}
	if problem != "" {
		return s.mappingPage(c, http.StatusUnprocessableEntity, m, problem, false)
	}
	if err := s.db(c).SaveColumnMapping(c.Request().Context(), currentOrg(c).ID, m); err != nil {
		return err
	}
	return s.mappingPage(c, http.StatusOK, m, "", true)
}
