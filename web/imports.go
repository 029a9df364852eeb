package web

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// historyLength is how many imports the history shows.
const historyLength = 100

func (s *Server) importsPage(c echo.Context, status int, outcomes []views.ImportOutcome) error {
	history, err := s.db(c).Imports(c.Request().Context(), currentOrg(c).ID, historyLength)
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
	prices, err := advisor.LoadOrgPrices(c.Request().Context(), s.db(c), req.Org.ID, advisor.PriceOverrides, time.Now())
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
	case err != nil:
		o.Error = "The import failed on our side; nothing was imported. Please try again."
	default:
		o.ImportID, o.Source, o.Rows, o.ReplacedRows, o.SkippedRows = res.ID, string(res.Source), res.Rows, res.ReplacedRows, res.SkippedRows
		o.Totals, o.Duplicate, o.ImportedAt = res.Totals, res.Duplicate, res.ImportedAt
		o.MergedRows, o.CostBasis = res.MergedRows, res.CostBasis
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
		history, err := s.db(c).Imports(c.Request().Context(), currentOrg(c).ID, historyLength)
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

// apiImport is an import as the API lists it: the result fields plus status.
type apiImport struct {
	ingest.ImportResult
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

func errUploadTooLarge(limit int64) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
		fmt.Sprintf("The upload is larger than this server's limit of %d MB (MAX_UPLOAD_MB). Split the file or compress it with gzip.", limit>>20))
}

// mappingForm is the column mapping form's fields, trimmed.
func mappingForm(c echo.Context) store.ColumnMapping {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	m := store.ColumnMapping{Date: v("date"), Cost: v("cost"), Currency: v("currency"), Service: v("service"),
		Account: v("account"), Provider: v("provider"), DateFormat: v("date_format"), DefaultCurrency: strings.ToUpper(v("default_currency"))}
	for _, t := range strings.Split(v("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			m.Tags = append(m.Tags, t)
		}
	}
	return m
}

func (s *Server) handleMappingShow(c echo.Context) error {
	m, err := s.db(c).ColumnMapping(c.Request().Context(), currentOrg(c).ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return render(c, http.StatusOK, views.MappingPage(s.shell(c, "Column mapping", "imports"), m, "", false))
}

func (s *Server) handleMappingSave(c echo.Context) error {
	m := mappingForm(c)
	problem := ""
	switch {
	case m.Date == "" || m.Cost == "":
		problem = "Name at least the date column and the cost column, as they appear in your CSV's header."
	case m.Currency == "" && len(m.DefaultCurrency) != 3:
		problem = "Name the currency column, or give a three-letter default currency such as USD."
	}
	if problem != "" {
		return render(c, http.StatusUnprocessableEntity, views.MappingPage(s.shell(c, "Column mapping", "imports"), m, problem, false))
	}
	if err := s.db(c).SaveColumnMapping(c.Request().Context(), currentOrg(c).ID, m); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.MappingPage(s.shell(c, "Column mapping", "imports"), m, "", true))
}
