package web

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
)

// The imports API: POST /api/v1/imports and the history, through the same
// importer as the upload form.

// handleAPIImportCreate imports one file sent as the raw body or as the
// multipart field "file". The body was read in full before the request took
// its connection (readBody in the route table), and is read twice here
// (hash, then parse).
func (s *Server) handleAPIImportCreate(c echo.Context) error {
	req := c.Request()
	name := c.QueryParam("filename")
	var body io.ReadSeeker
	if mt, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType)); mt == echo.MIMEMultipartForm {
		fh, err := c.FormFile("file")
		if err != nil {
			return echo.NewHTTPError(http.StatusUnprocessableEntity, `send the file as the multipart field "file", or as the raw request body`)
		}
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		body = f
		if name == "" {
			name = filepath.Base(fh.Filename)
		}
	} else {
		spooled, ok := req.Body.(io.ReadSeeker)
		if !ok {
			return errors.New("import: request body not read ahead: the route lacks readBody")
		}
		body = spooled
	}
	if name == "" {
		name = "upload.csv"
	}
	ireq, err := s.importRequest(c, name, c.QueryParam("source"), "api")
	if err != nil {
		return err
	}
	res, err := s.importer.With(s.db(c)).Import(req.Context(), ireq, body)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Duplicate {
		status = http.StatusOK
	}
	return c.JSON(status, res)
}

func (s *Server) handleAPIImportShow(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	imp, err := s.db(c).Import(c.Request().Context(), currentOrg(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ingest.HistoryEntryOf(imp))
}

// handleAPIImportDelete is DELETE /api/v1/imports/{id}: 204 once the
// import and its rows are gone.
func (s *Server) handleAPIImportDelete(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	err = s.savingsInputsChange(c, func(st *store.Store) error {
		_, err := st.RemoveImport(c.Request().Context(), currentOrg(c).ID, id, 0, "api")
		return err
	})
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleAPIImportList(c echo.Context) error {
	imps, err := s.db(c).Imports(c.Request().Context(), currentOrg(c).ID, ingest.HistoryLength)
	if err != nil {
		return err
	}
	out := make([]ingest.HistoryEntry, 0, len(imps))
	for _, imp := range imps {
		out = append(out, ingest.HistoryEntryOf(imp))
	}
	return c.JSON(http.StatusOK, map[string]any{"imports": out})
}
