package web

import (
	"errors"
	"html"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// apiError is the JSON body of every API error. Line and Column are set for
// errors in an uploaded file, Field for a number out of bounds.
type apiError struct {
	Error  string `json:"error"`
	Field  string `json:"field,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column string `json:"column,omitempty"`
	// UpgradeURL is where to change plan, for a plan's limit.
	UpgradeURL string `json:"upgrade_url,omitempty"`
}

// statusError lets domain errors (an import's parse error, say) carry their
// own status and position without depending on echo.
type statusError interface {
	error
	HTTPStatus() int
}

// handleError is the one place errors become responses: store sentinels
// and HTTP errors map to their status, anything else is a 500 whose detail
// is logged, never shown.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status := http.StatusInternalServerError
	msg := "Something went wrong on our side. It has been logged; please try again."
	body := apiError{}
	var he *echo.HTTPError
	var se statusError
	var le *billing.LimitError
	switch {
	case errors.As(err, &le):
		status, msg, body.UpgradeURL = le.HTTPStatus(), le.Msg, le.UpgradeURL
	case errors.Is(err, store.ErrNotFound):
		status, msg = http.StatusNotFound, "Not found."
	case errors.Is(err, store.ErrImportRunning):
		status, msg = http.StatusConflict, "This import is still running; remove it once it has finished."
	case errors.Is(err, store.ErrImportRemoved):
		status, msg = http.StatusConflict, "This import was removed already."
	case errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge:
		status, msg = he.Code, errUploadTooLarge(s.cfg.MaxUploadBytes).(*echo.HTTPError).Message.(string)
	case errors.As(err, &he):
		status = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(status)
		}
	case errors.As(err, &se):
		status, msg = se.HTTPStatus(), se.Error()
		var pe interface{ Position() (int, string) }
		if errors.As(err, &pe) {
			body.Line, body.Column = pe.Position()
		}
		var qe *quantity.Error
		if errors.As(err, &qe) {
			body.Field = qe.Field
		}
	}
	req := c.Request()
	attrs := []slog.Attr{
		slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
		slog.String("method", req.Method),
		slog.String("path", req.URL.Path),
		slog.Int("status", status),
		slog.Any("error", err),
	}
	if status >= 500 {
		s.log.LogAttrs(req.Context(), slog.LevelError, "request failed", attrs...)
	} else {
		s.log.LogAttrs(req.Context(), slog.LevelDebug, "request refused", attrs...)
	}

	if req.Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if isAPI(c) {
		body.Error = msg
		_ = c.JSON(status, body)
		return
	}
	if isHTMX(c) {
		// Show the message in place of whatever the request was to update.
		c.Response().Header().Set("HX-Retarget", "#htmx-error")
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		link := ""
		if le != nil {
			link = ` <a href="` + html.EscapeString(billing.UpgradePath) + `">Upgrade</a>`
		}
		_ = c.HTML(status, `<div class="flash flash-error" role="alert">`+html.EscapeString(msg)+link+`</div>`)
		return
	}
	if le != nil {
		if rerr := render(c, status, views.LimitPage(s.shell(c, "Plan limit", ""), msg, billing.UpgradePath)); rerr == nil {
			return
		}
	}
	if rerr := render(c, status, views.ErrorPage(s.shell(c, http.StatusText(status), ""), status, msg)); rerr != nil {
		s.log.Error("render error page", slog.Any("error", rerr))
		_ = c.String(status, msg)
	}
}
