package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
)

// FailuresBeforeNotice is how many runs in a row must fail for a reason
// that may pass by itself (a provider busy or down) before the org's admins
// are told; a failure that needs a person is told at once.
const FailuresBeforeNotice = 3

// Fix is what a person should do about a sync's failure, in their words.
// A failure that passes by itself (a provider busy or down, retried) is
// freshness.FixWait.
func Fix(err error) string {
	var pe *ProviderError
	var ie *ingest.ImportError
	switch {
	case errors.Is(err, seal.ErrNoKey):
		return "Set SECRET_KEY on the server (the key the credentials were saved under) and restart it."
	case errors.Is(err, seal.ErrWrongKey):
		return "Start the server with the SECRET_KEY the credentials were saved under, or paste the key again on the Connections page."
	case errors.As(err, &pe):
		return providerFix(pe)
	case errors.As(err, &ie):
		return "A file the provider delivered could not be imported (the error says where): check the export's settings, " +
			"then press Sync now."
	case strings.Contains(err.Error(), "stored credentials"):
		return "Paste the key again on the Connections page (Replace key)."
	}
	return "Press Test on the Connections page to see what is wrong, then Sync now."
}

// providerFix is the fix of a provider's refusal, by its status.
func providerFix(pe *ProviderError) string {
	paste := "paste a new one on the Connections page (Replace key)"
	switch {
	case pe.Status == http.StatusUnauthorized:
		return "The key was refused (revoked, expired, or not an admin key): " + paste + "."
	case pe.Status == http.StatusForbidden && (pe.Provider == "S3" || pe.Provider == "Azure Storage"):
		return "The credentials may not read the export: grant them what the error names, or " + paste + "."
	case pe.Status == http.StatusForbidden:
		return "The key may not read the report: use an admin key of the organization, and " + paste + "."
	case pe.Status == http.StatusNotFound:
		return "What the connection names does not exist: check its bucket, prefix or container, or delete it and add it again."
	case strings.Contains(pe.Msg, "refused") || strings.Contains(pe.Msg, "region"):
		return "Check the connection's credentials and region, and " + paste + " if they changed."
	case strings.Contains(pe.Msg, "does not resolve"):
		return "Check the name the connection was given (the error says which): delete it and add it again with the right one."
	case pe.Transient():
		return freshness.FixWait
	}
	return "Press Test on the Connections page to see what is wrong, then Sync now."
}

// notice tells org's admins, by email and on the org's channels, when
// connection id starts to fail (once per failure streak) or its data stops
// advancing past its kind's lag, and again when it recovers. It decides
// under the connection's row lock, in the transaction that records the
// deliveries, whose keys name the problem and when it began: a repeated
// call tells nobody twice.
func (s *Service) notice(ctx context.Context, org store.Org, id int64) error {
	if s.Notifier == nil {
		return nil
	}
	return s.Store.InTx(ctx, func(tx *store.Store) error {
		c, err := tx.ConnectionForUpdate(ctx, org.ID, id)
		if err != nil {
			return err
		}
		ts, err := tx.DataThrough(ctx, org.ID)
		if err != nil {
			return err
		}
		var through time.Time
		var formats []string
		for _, t := range ts {
			if t.ConnectionID == id {
				formats = append(formats, t.Source)
				if t.Through.After(through) {
					through = t.Through
				}
			}
		}
		j := freshness.Judge(c, through, formats, s.now())
		problem, since := problemOf(c, j)
		var nt *notify.Notification
		switch {
		case problem != "" && (c.Notice != problem || c.NoticeSince == nil || !c.NoticeSince.Equal(since)):
			m := problemNotice(org, j, problem, since)
			nt = &m
			err = tx.SetConnectionNotice(ctx, org.ID, id, problem, &since)
		case problem == "" && c.Notice != "" && j.Health == freshness.HealthOK:
			m := recoveredNotice(org, c, j)
			nt = &m
			err = tx.SetConnectionNotice(ctx, org.ID, id, "", nil)
		}
		if err != nil || nt == nil {
			return err
		}
		if nt.Email, err = adminEmails(ctx, tx, org.ID); err != nil {
			return err
		}
		_, err = s.Notifier.With(tx).Deliver(ctx, *nt)
		return err
	})
}

// problemOf is the problem with c that its admins should be told of, and
// when it began: a failure that needs a person, or FailuresBeforeNotice
// failures in a row; data that stopped advancing. "" for none (a paused
// connection has none).
func problemOf(c store.Connection, j freshness.Connection) (string, time.Time) {
	switch j.Health {
	case freshness.HealthFailing:
		if j.NeedsPerson || c.Failures >= FailuresBeforeNotice {
			return store.NoticeFailing, j.Since
		}
	case freshness.HealthStalled:
		return store.NoticeStalled, j.Since
	}
	return "", time.Time{}
}

// adminEmails are the addresses of orgID's owners and admins.
func adminEmails(ctx context.Context, st *store.Store, orgID int64) ([]string, error) {
	ms, err := st.Members(ctx, orgID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		if m.Role.CanAdmin() {
			out = append(out, m.Email)
		}
	}
	return out, nil
}

// noticeKey names a notice: one per connection, problem and its start.
func noticeKey(id int64, what string, since time.Time) string {
	return "connection:" + strconv.FormatInt(id, 10) + ":" + what + ":" + since.UTC().Format(time.RFC3339)
}

func problemNotice(org store.Org, j freshness.Connection, problem string, since time.Time) notify.Notification {
	loc := org.Location()
	at := since.In(loc).Format("Mon 2 Jan 15:04 MST")
	var subject, text string
	if problem == store.NoticeFailing {
		subject = fmt.Sprintf("Connection “%s” is failing: %s", label.Clean(j.Name), clip(label.Clean(j.Error), 120))
		text = fmt.Sprintf("The connection “%s” (%s) of %s has failed since %s (%s in a row).\n\nError: %s\nWhat to do: %s\n",
			label.Clean(j.Name), j.Kind, label.Clean(org.Name), at, runs(j.Failures), label.Clean(j.Error), j.Fix)
	} else {
		subject = fmt.Sprintf("Connection “%s” has stopped delivering data", label.Clean(j.Name))
		text = fmt.Sprintf("The connection “%s” (%s) of %s runs, but its data has not advanced since %s: "+
			"its kind is usually no more than %s behind.\n\nWhat to do: check that the provider still writes the export "+
			"or report the connection reads (its prefix, its project), then press Sync now.\n",
			label.Clean(j.Name), j.Kind, label.Clean(org.Name), throughText(j.Through, loc), lagText(j.Lag))
	}
	text += fmt.Sprintf("\nUntil it is fixed, the dashboard, the budgets and the digest lack its data (%s).\n"+
		"You get one email for this problem, and one when the connection works again.\n", throughText(j.Through, loc))
	return notify.Notification{
		Kind: notify.KindConnection, OrgID: org.ID, Key: noticeKey(j.ID, problem, since),
		Subject: subject, Text: text, Link: "/connections",
		Payload: noticePayload(j, problem, since),
	}
}

func recoveredNotice(org store.Org, c store.Connection, j freshness.Connection) notify.Notification {
	since := time.Time{}
	if c.NoticeSince != nil {
		since = *c.NoticeSince
	}
	text := fmt.Sprintf("The connection “%s” (%s) of %s works again: its last run imported %d rows, and its data reaches %s.\n",
		label.Clean(j.Name), j.Kind, label.Clean(org.Name), c.LastRows, throughText(j.Through, org.Location()))
	return notify.Notification{
		Kind: notify.KindConnection, OrgID: org.ID, Key: noticeKey(j.ID, "recovered", since),
		Subject: fmt.Sprintf("Connection “%s” works again", label.Clean(j.Name)), Text: text, Link: "/connections",
		Payload: noticePayload(j, "recovered", since),
	}
}

func noticePayload(j freshness.Connection, what string, since time.Time) map[string]any {
	var through any
	if !j.Through.IsZero() {
		through = j.Through.UTC().Format(time.RFC3339)
	}
	p := map[string]any{"kind": "connection", "event": what, "connection": map[string]any{"id": j.ID, "name": j.Name, "kind": j.Kind},
		"since": since.UTC().Format(time.RFC3339), "data_through": through}
	if what == store.NoticeFailing {
		p["error"], p["fix"], p["failures"] = j.Error, j.Fix, j.Failures
	}
	return p
}

func runs(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}

// throughText says how far data reaches, for people.
func throughText(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "it has delivered nothing yet"
	}
	return "newest through " + t.Add(-time.Nanosecond).In(loc).Format("Mon 2 Jan 2006")
}

// lagText is a lag in hours, for people.
func lagText(d time.Duration) string {
	return strconv.FormatFloat(d.Hours(), 'f', -1, 64) + " hours"
}

// ReplaceKey replaces orgID's connection id's credentials with those in in
// (the fields of its kind: api_key; access_key_id and secret_access_key;
// account_key or sas_token; service_account_json), keeping its settings, and makes it due at
// once. st is the caller's store (fenced to the org). A refused input is an
// *InputError.
func (s *Service) ReplaceKey(ctx context.Context, st *store.Store, orgID, id int64, in Input) (store.Connection, error) {
	c, err := st.Connection(ctx, orgID, id)
	if err != nil {
		return c, err
	}
	var set Settings
	if err := json.Unmarshal(c.Settings, &set); err != nil {
		return c, fmt.Errorf("the connection's settings are damaged: %w", err)
	}
	// The stored settings with the new credentials, checked as when added.
	full := Input{Name: c.Name, Kind: c.Kind, APIKey: in.APIKey, Data: set.Data,
		Bucket: set.Bucket, Prefix: set.Prefix, Region: set.Region, EndpointURL: set.EndpointURL,
		AccessKeyID: in.AccessKeyID, SecretAccessKey: in.SecretAccessKey,
		Account: set.Account, Container: set.Container, AccountKey: in.AccountKey, SASToken: in.SASToken,
		Table: set.Table, ServiceAccountJSON: in.ServiceAccountJSON}
	if c.Kind == KindAzure && strings.Contains(in.SASToken, "://") {
		return c, &InputError{"sas_token", "paste the SAS token (sv=…&sig=…), not a URL: the container stays the connection's"}
	}
	_, cred, err := full.validate(s.now())
	if err != nil {
		return c, err
	}
	if s.Key == nil {
		return c, seal.ErrNoKey
	}
	plain, err := json.Marshal(cred)
	if err != nil {
		return c, err
	}
	if err := st.ReplaceConnectionSecret(ctx, orgID, id, s.Key.Seal(orgID, plain), cred.hint()); err != nil {
		return c, err
	}
	return st.Connection(ctx, orgID, id)
}
