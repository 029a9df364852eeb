package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/jsonlimit"
)

// Postgres text and jsonb hold UTF-8 without NUL characters. Text from
// outside that breaks either would fail deep in a query as a 500, so it is
// refused at the door with a 422 naming the field: query parameters, path
// parameters and form fields (file names of uploads included) by
// checkRequestText, JSON bodies by readJSON, uploaded files' cells by the
// ingest Reader. Refusing beats cleaning the text up: a name with a stray
// byte in it is a mistake the sender should see, not one we should hide.

// textProblem says why s cannot be stored as text, or "" when it can.
func textProblem(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL byte"
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	}
	return ""
}

// fieldLabel shows a field's name in an error: as it is when it is clean
// text, quoted with escapes when the name is itself the bad text.
func fieldLabel(name string) string {
	if textProblem(name) != "" {
		return strconv.Quote(name)
	}
	return name
}

func badText(field, problem string) error {
	return echo.NewHTTPError(http.StatusUnprocessableEntity, fieldLabel(field)+": "+problem)
}

// storedHeaders are the request headers whose values the server keeps.
var storedHeaders = []string{"User-Agent"}

// checkText refuses a request carrying text Postgres cannot store in its
// query, path parameters, stored headers or (outside the API) form fields.
// It runs after CSRF, so only requests the server would act on have their
// forms read here. API bodies are left to the handlers, behind the token
// check: JSON through readJSON, files through the importer.
func (s *Server) checkText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := checkRequestText(c); err != nil {
			return err
		}
		return next(c)
	}
}

func checkRequestText(c echo.Context) error {
	req := c.Request()
	for _, h := range storedHeaders {
		if p := textProblem(req.Header.Get(h)); p != "" {
			return badText("header "+h, p)
		}
	}
	if err := checkValues(c.QueryParams()); err != nil {
		return err
	}
	for i, name := range c.ParamNames() {
		if i < len(c.ParamValues()) {
			if p := textProblem(c.ParamValues()[i]); p != "" {
				return badText(name, p)
			}
		}
	}
	if isAPI(c) {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	switch mt {
	case echo.MIMEApplicationForm:
		// A form that does not parse is the handler's to report.
		if _, err := c.FormParams(); err == nil {
			return checkValues(req.PostForm)
		}
	case echo.MIMEMultipartForm:
		form, err := c.MultipartForm()
		if err != nil {
			return nil
		}
		if err := checkValues(form.Value); err != nil {
			return err
		}
		for _, field := range slices.Sorted(maps.Keys(form.File)) {
			for _, fh := range form.File[field] {
				if p := textProblem(fh.Filename); p != "" {
					return badText("filename", p)
				}
			}
		}
	}
	return nil
}

// checkValues checks names and values, in name order so the error is the
// same every time.
func checkValues(vs url.Values) error {
	for _, name := range slices.Sorted(maps.Keys(vs)) {
		if p := textProblem(name); p != "" {
			return badText(name, nameProblem(p))
		}
		for _, v := range vs[name] {
			if p := textProblem(v); p != "" {
				return badText(name, p)
			}
		}
	}
	return nil
}

// readJSON reads a JSON request body and refuses it when it nests deeper
// than jsonlimit.MaxDepth (before anything decodes it), or when a string in
// it, key or value, is not text Postgres can store; the error names where
// the string is ("name", "scope.tags.team", "recipients[1]"). Invalid UTF-8
// has to be caught here, in the raw bytes: encoding/json would quietly turn
// it into U+FFFD.
func readJSON(c echo.Context) ([]byte, error) {
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, err
	}
	if err := jsonlimit.Check(raw); err != nil {
		return nil, echo.NewHTTPError(http.StatusUnprocessableEntity, "body: "+err.Error())
	}
	if path, p := jsonTextProblem(raw); p != "" {
		return nil, badText(path, p)
	}
	return raw, nil
}

// jsonFrame is an object or array jsonTextProblem is inside.
type jsonFrame struct {
	object  bool
	keyNext bool   // object: the next string is a key
	key     string // object: the current key
	index   int    // array: the current index
}

// jsonPath names the place the next value in the innermost of frames goes;
// key, when set, is a key of that object instead. It is built only for an
// error: keeping a path per frame cost work with the square of the depth.
func jsonPath(frames []jsonFrame, key *string) string {
	var b strings.Builder
	for i, f := range frames {
		switch {
		case i == len(frames)-1 && key != nil:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(fieldLabel(*key))
		case f.object:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(fieldLabel(f.key))
		default:
			fmt.Fprintf(&b, "[%d]", f.index)
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// jsonTextProblem finds the first string in the JSON document raw that is
// not UTF-8 or decodes to one with a NUL, and returns where it is and what is
// wrong. A document that is not JSON is left to the decoder to report. The
// caller has bounded its depth (jsonlimit).
func jsonTextProblem(raw []byte) (path, problem string) {
	if utf8.Valid(raw) && !bytes.Contains(raw, []byte(`\u0000`)) {
		return "", ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []jsonFrame
	// done moves past a value in the container around it.
	done := func() {
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		if top.object {
			top.keyNext = true
		} else {
			top.index++
		}
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return "", ""
		}
		// Outside strings, bytes that are not UTF-8 are not JSON either;
		// inside them, this span is where they show.
		span := raw[start:dec.InputOffset()]
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, jsonFrame{object: t == '{', keyNext: true})
			default:
				stack = stack[:len(stack)-1]
				done()
			}
			continue
		case string:
			p := ""
			switch {
			case !utf8.Valid(span):
				p = "not valid UTF-8"
			case strings.IndexByte(t, 0) >= 0:
				p = "contains a NUL character (\\u0000)"
			}
			if top := len(stack) - 1; top >= 0 && stack[top].object && stack[top].keyNext {
				if p != "" {
					return jsonPath(stack, &t), nameProblem(p)
				}
				stack[top].key, stack[top].keyNext = t, false
				continue
			}
			if p != "" {
				return jsonPath(stack, nil), p
			}
		}
		done()
	}
}

// nameProblem words a field name's own problem.
func nameProblem(p string) string {
	if strings.HasPrefix(p, "not ") {
		return "the name is " + p
	}
	return "the name " + p
}
