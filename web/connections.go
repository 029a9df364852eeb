package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// testTimeout bounds a connection's Test button: one small call to the
// provider while the admin waits.
const testTimeout = 20 * time.Second

// connectionsPage renders the Connections page with v's form state.
func (s *Server) connectionsPage(c echo.Context, status int, v views.ConnectionsView) error {
	ctx, org := c.Request().Context(), currentOrg(c)
	cs, err := s.db(c).Connections(ctx, org.ID)
	if err != nil {
		return err
	}
	rep, err := freshness.Load(ctx, s.db(c), *org, s.now())
	if err != nil {
		return err
	}
	health := map[int64]freshness.Connection{}
	for _, j := range rep.Connections {
		health[j.ID] = j
	}
	for _, conn := range cs {
		cv := connect.ViewOf(conn)
		detail := cv.Settings.Data
		if cv.Settings.StartDate != "" {
			detail += " since " + cv.Settings.StartDate
		}
		switch conn.Kind {
		case connect.KindS3:
			detail = "s3://" + cv.Settings.Bucket + "/" + cv.Settings.Prefix
		case connect.KindAzure:
			detail = cv.Settings.Account + " " + cv.Settings.Container + "/" + cv.Settings.Prefix
			if cv.Settings.Account == "" {
				detail = cv.Settings.EndpointURL + "/" + cv.Settings.Container + "/" + cv.Settings.Prefix
			}
		case connect.KindGCP:
			detail = cv.Settings.Table + " since " + cv.Settings.StartDate
		}
		billed := ""
		if cv.LastBytesBilled != nil {
			billed = quantity.FormatBytes(*cv.LastBytesBilled)
		}
		j := health[conn.ID]
		v.Rows = append(v.Rows, views.ConnectionRow{
			ID: conn.ID, Name: conn.Name, Kind: connect.KindLabel(conn.Kind), KindKey: conn.Kind, Detail: detail, Hint: conn.SecretHint,
			Paused: conn.Paused, LastRunAt: conn.LastRunAt, LastStatus: conn.LastStatus, LastError: conn.LastError,
			LastRows: conn.LastRows, NextRunAt: conn.NextRunAt, BytesBilled: billed,
			Health: string(j.Health), Fix: j.Fix, Since: j.Since, Through: j.Through, Lag: j.Lag,
			KeyErrors: v.KeyErrors[conn.ID],
		})
	}
	if v.Errors == nil {
		v.Errors = map[string]string{}
	}
	v.KeyMissing = s.connections.Key == nil
	v.HostCredentials = s.connections.AllowHostCredentials
	v.Now = s.now()
	return render(c, status, views.ConnectionsPage(s.shell(c, "Connections", "connections"), v))
}

func (s *Server) handleConnections(c echo.Context) error {
	return s.connectionsPage(c, http.StatusOK, views.ConnectionsView{})
}

// createConnection saves in as the org's connection and queues its first
// sync in the same transaction: the pages and the API share it.
func (s *Server) createConnection(c echo.Context, in connect.Input) (store.Connection, error) {
	ctx := c.Request().Context()
	org := currentOrg(c)
	var userID int64
	if u := currentUser(c); u != nil {
		userID = u.ID
	}
	var conn store.Connection
	err := s.db(c).InTx(ctx, func(tx *store.Store) error {
		var err error
		if conn, err = s.connections.Create(ctx, tx, org.ID, userID, in); err != nil {
			return err
		}
		return s.enqueueSync(ctx, tx, conn)
	})
	return conn, err
}

// enqueueSync queues a sync of conn now.
func (s *Server) enqueueSync(ctx context.Context, st *store.Store, conn store.Connection) error {
	_, err := connect.Enqueue(ctx, s.queue, st, conn.OrgID, conn.ID)
	return err
}

func (s *Server) handleConnectionCreate(c echo.Context) error {
	f := views.ConnectionForm{
		Name: c.FormValue("name"), Kind: c.FormValue("kind"), StartDate: c.FormValue("start_date"),
		RestateDays: c.FormValue("restate_days"), Data: c.FormValue("data"),
		Bucket: c.FormValue("bucket"), Prefix: c.FormValue("prefix"), Region: c.FormValue("region"),
		EndpointURL: c.FormValue("endpoint_url"), AccessKeyID: c.FormValue("access_key_id"),
		Account: c.FormValue("account"), Container: c.FormValue("container"),
		AzurePrefix: c.FormValue("azure_prefix"), AzureEndpointURL: c.FormValue("azure_endpoint_url"),
		Table: c.FormValue("table"), GCPStartDate: c.FormValue("gcp_start_date"), GCPRestateDays: c.FormValue("gcp_restate_days"),
	}
	in := connect.Input{
		Name: f.Name, Kind: f.Kind, APIKey: c.FormValue("api_key"), StartDate: f.StartDate,
		RestateDays: quantity.Text(f.RestateDays), Data: f.Data,
		Bucket: f.Bucket, Prefix: f.Prefix, Region: f.Region, EndpointURL: f.EndpointURL,
		AccessKeyID: f.AccessKeyID, SecretAccessKey: c.FormValue("secret_access_key"),
	}
	switch f.Kind {
	case connect.KindAzure:
		// The Azure fieldset has a directory and an endpoint of its own.
		in.Prefix, in.EndpointURL = f.AzurePrefix, f.AzureEndpointURL
		in.Account, in.Container = f.Account, f.Container
		in.AccountKey, in.SASToken = c.FormValue("account_key"), c.FormValue("sas_token")
	case connect.KindGCP:
		// So has the GCP one its days.
		in.Table, in.ServiceAccountJSON = f.Table, c.FormValue("service_account_json")
		in.StartDate, in.RestateDays = f.GCPStartDate, quantity.Text(f.GCPRestateDays)
	}
	conn, err := s.createConnection(c, in)
	var ie *connect.InputError
	switch {
	case errors.As(err, &ie):
		errs := map[string]string{}
		for _, ie := range connect.InputErrors(err) {
			errs[ie.Field] = capitalise(ie.Msg) + "."
		}
		return s.connectionsPage(c, http.StatusUnprocessableEntity, views.ConnectionsView{Form: f, Errors: errs})
	case errors.Is(err, seal.ErrNoKey):
		return s.connectionsPage(c, http.StatusUnprocessableEntity, views.ConnectionsView{Form: f, Errors: map[string]string{"form": err.Error()}})
	case err != nil:
		return err
	}
	s.flash(c, "Connection "+conn.Name+" saved; its key is stored encrypted and will not be shown again. The first pull is queued.")
	return c.Redirect(http.StatusSeeOther, "/connections")
}

func (s *Server) pathConnection(c echo.Context) (store.Connection, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return store.Connection{}, err
	}
	return s.db(c).Connection(c.Request().Context(), currentOrg(c).ID, id)
}

// handleConnectionTest makes one small call with the connection's key and
// says what came of it.
func (s *Server) handleConnectionTest(c echo.Context) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), testTimeout)
	defer cancel()
	if err := s.connections.Test(ctx, conn); err != nil {
		s.flash(c, conn.Name+": the test failed: "+err.Error())
	} else {
		s.flash(c, conn.Name+": the test call succeeded.")
	}
	return c.Redirect(http.StatusSeeOther, "/connections")
}

func (s *Server) handleConnectionSync(c echo.Context) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	if err := s.enqueueSync(c.Request().Context(), s.db(c), conn); err != nil {
		return err
	}
	s.flash(c, conn.Name+": a pull is queued.")
	return c.Redirect(http.StatusSeeOther, "/connections")
}

// keyInput is the credentials a Replace key form or request carries.
func keyInput(get func(string) string) connect.Input {
	return connect.Input{APIKey: get("api_key"), AccessKeyID: get("access_key_id"), SecretAccessKey: get("secret_access_key"),
		AccountKey: get("account_key"), SASToken: get("sas_token"), ServiceAccountJSON: get("service_account_json")}
}

// replaceKey replaces conn's credentials and queues a pull with them, in
// one transaction: the page and the API share it.
func (s *Server) replaceKey(c echo.Context, conn store.Connection, in connect.Input) (store.Connection, error) {
	ctx := c.Request().Context()
	var out store.Connection
	err := s.db(c).InTx(ctx, func(tx *store.Store) error {
		var err error
		if out, err = s.connections.ReplaceKey(ctx, tx, conn.OrgID, conn.ID, in); err != nil {
			return err
		}
		return s.enqueueSync(ctx, tx, out)
	})
	return out, err
}

// handleConnectionKey is an admin pasting a new key for a connection (the
// fix of a revoked one): it is checked as when the connection was added,
// sealed, and a pull is queued.
func (s *Server) handleConnectionKey(c echo.Context) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	_, err = s.replaceKey(c, conn, keyInput(c.FormValue))
	var ie *connect.InputError
	switch {
	case errors.As(err, &ie):
		var msgs []string
		for _, ie := range connect.InputErrors(err) {
			msgs = append(msgs, capitalise(ie.Msg)+".")
		}
		return s.connectionsPage(c, http.StatusUnprocessableEntity, views.ConnectionsView{
			KeyErrors: map[int64]string{conn.ID: strings.Join(msgs, " ")}})
	case errors.Is(err, seal.ErrNoKey):
		return s.connectionsPage(c, http.StatusUnprocessableEntity, views.ConnectionsView{KeyErrors: map[int64]string{conn.ID: err.Error()}})
	case err != nil:
		return err
	}
	s.flash(c, conn.Name+": the new key is stored encrypted; a pull with it is queued.")
	return c.Redirect(http.StatusSeeOther, "/connections")
}

func (s *Server) handleConnectionPause(c echo.Context) error {
	return s.setPaused(c, true)
}

func (s *Server) handleConnectionResume(c echo.Context) error {
	return s.setPaused(c, false)
}

func (s *Server) setPaused(c echo.Context, paused bool) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	if err := s.db(c).SetConnectionPaused(c.Request().Context(), conn.OrgID, conn.ID, paused); err != nil {
		return err
	}
	if paused {
		s.flash(c, conn.Name+" paused: it is not pulled until resumed.")
	} else {
		s.flash(c, conn.Name+" resumed: it is pulled within minutes.")
	}
	return c.Redirect(http.StatusSeeOther, "/connections")
}

func (s *Server) handleConnectionDelete(c echo.Context) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	if err := s.db(c).DeleteConnection(c.Request().Context(), conn.OrgID, conn.ID); err != nil {
		return err
	}
	s.flash(c, "Connection "+conn.Name+" deleted; what it imported stays.")
	return c.Redirect(http.StatusSeeOther, "/connections")
}

// The connections API: /api/v1/connections, for scripts with an org API
// token. Credentials go in and never come out.

func (s *Server) handleAPIConnectionList(c echo.Context) error {
	cs, err := s.db(c).Connections(c.Request().Context(), currentOrg(c).ID)
	if err != nil {
		return err
	}
	out := make([]connect.View, 0, len(cs))
	for _, conn := range cs {
		out = append(out, connect.ViewOf(conn))
	}
	return c.JSON(http.StatusOK, map[string]any{"connections": out})
}

func (s *Server) handleAPIConnectionCreate(c echo.Context) error {
	var in connect.Input
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	conn, err := s.createConnection(c, in)
	if err != nil {
		return apiConnectionError(err)
	}
	return c.JSON(http.StatusCreated, connect.ViewOf(conn))
}

// apiConnectionError is err as the connections API answers it: a refused
// input (every field at fault) or a server without SECRET_KEY is a 422.
func apiConnectionError(err error) error {
	var ie *connect.InputError
	switch {
	case errors.As(err, &ie):
		msgs := []string{}
		for _, ie := range connect.InputErrors(err) {
			msgs = append(msgs, ie.Error())
		}
		return unprocessable("%s", strings.Join(msgs, "; "))
	case errors.Is(err, seal.ErrNoKey):
		return unprocessable("%s", err.Error())
	}
	return err
}

func (s *Server) handleAPIConnectionDelete(c echo.Context) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	if err := s.db(c).DeleteConnection(c.Request().Context(), conn.OrgID, conn.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// handleAPIConnectionKey replaces a connection's credentials:
// PUT /api/v1/connections/ID/key with {"api_key": …} (or the kind's
// fields), 200 and the connection, a pull queued.
func (s *Server) handleAPIConnectionKey(c echo.Context) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	var body struct {
		APIKey          string `json:"api_key"`
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
		AccountKey      string `json:"account_key"`
		SASToken        string `json:"sas_token"`
		ServiceAccount  string `json:"service_account_json"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	out, err := s.replaceKey(c, conn, connect.Input{APIKey: body.APIKey, AccessKeyID: body.AccessKeyID,
		SecretAccessKey: body.SecretAccessKey, AccountKey: body.AccountKey, SASToken: body.SASToken, ServiceAccountJSON: body.ServiceAccount})
	if err != nil {
		return apiConnectionError(err)
	}
	return c.JSON(http.StatusOK, connect.ViewOf(out))
}

// handleAPIConnectionSync queues a pull; queued is false when one is
// queued or running already.
func (s *Server) handleAPIConnectionSync(c echo.Context) error {
	conn, err := s.pathConnection(c)
	if err != nil {
		return err
	}
	queued, err := connect.Enqueue(c.Request().Context(), s.queue, s.db(c), conn.OrgID, conn.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"queued": queued, "connection": conn.Name})
}
