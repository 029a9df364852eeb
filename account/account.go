// Package account is the mail Burnrate sends people about their accounts:
// invites, password reset links, and the notice that someone tried to sign
// up with an address that has an account. The pages (package web) call it;
// it writes the messages and queues them in the outbox (package mail), in
// the caller's transaction.
//
// A password reset is asked for by a job (ResetRequestArgs) rather than in
// the request: the page answers the same, in the same time, whether the
// address has an account or not, and the job alone finds out.
package account

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"log/slog"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/store"
)

// Mail kinds, as the outbox records them.
const (
	KindInvite        = "invite"
	KindPasswordReset = "password_reset"
	KindSignupNotice  = "signup_notice"
	KindSignupConfirm = "signup_confirm"
)

// Mailer writes and queues account mail. BaseURL (no trailing slash) is
// where links in the mail point.
type Mailer struct {
	Outbox  *mail.Outbox
	BaseURL string
}

// Invite is an invite to mail.
type Invite struct {
	OrgID        int64
	OrgName      string
	InviterName  string
	InviterEmail string
	To           string
	Role         access.Role
	Link         string // the accept link, with its secret
}

// QueueInvite mails an invite link, as mail of the inviting org, in st's
// transaction (st may be fenced to that org).
func (m *Mailer) QueueInvite(ctx context.Context, st *store.Store, inv Invite) error {
	data := map[string]any{
		"Org": inv.OrgName, "Inviter": inviterName(inv), "InviterEmail": inv.InviterEmail,
		"Role": string(inv.Role), "Link": inv.Link, "Days": int(store.InviteTTL / (24 * time.Hour)),
	}
	msg, err := render(inviteMail, data)
	if err != nil {
		return err
	}
	msg.To = []string{inv.To}
	msg.Subject = fmt.Sprintf("%s invited you to %s on Burnrate", inviterName(inv), inv.OrgName)
	_, err = m.Outbox.Queue(ctx, st, inv.OrgID, KindInvite, msg)
	return err
}

func inviterName(inv Invite) string {
	if n := strings.TrimSpace(inv.InviterName); n != "" {
		return n
	}
	return inv.InviterEmail
}

// QueueSignupNotice tells the owner of an address that someone tried to
// create an account with it: sign-up answers such an attempt as if it had
// worked, so as not to tell a stranger which addresses have accounts.
func (m *Mailer) QueueSignupNotice(ctx context.Context, st *store.Store, to string) error {
	return m.queueTo(ctx, st, KindSignupNotice, signupNoticeMail, to, "Someone tried to sign up to Burnrate with your address",
		map[string]any{"Email": to, "Login": m.BaseURL + "/login", "Forgot": m.BaseURL + "/password/forgot"})
}

// QueueSignupConfirm mails the link that finishes a sign-up (link carries
// its secret), to the address signed up with.
func (m *Mailer) QueueSignupConfirm(ctx context.Context, st *store.Store, to, link string) error {
	return m.queueTo(ctx, st, KindSignupConfirm, signupConfirmMail, to, "Finish signing up to Burnrate",
		map[string]any{"Email": to, "Link": link, "Hours": int(store.SignupTTL / time.Hour)})
}

// queueTo renders tmpl with data and queues it to one address, as account
// mail (of no org).
func (m *Mailer) queueTo(ctx context.Context, st *store.Store, kind string, tmpl template, to, subject string, data map[string]any) error {
	msg, err := render(tmpl, data)
	if err != nil {
		return err
	}
	msg.To = []string{to}
	msg.Subject = subject
	_, err = m.Outbox.Queue(ctx, st, 0, kind, msg)
	return err
}

// ResetRequestArgs asks for a password reset link for an address; the job
// mails one if the address has an account, and does nothing otherwise.
// Every request gets its own link (the page limits how many an address
// gets).
type ResetRequestArgs struct {
	Email string `json:"email"`
}

// Kind is the job's kind, as stored.
func (ResetRequestArgs) Kind() string { return "password_reset_request" }

// RequestPasswordReset enqueues the job that mails a reset link to email if
// it has an account.
func RequestPasswordReset(ctx context.Context, q *jobs.Queue, st *store.Store, email string) error {
	_, err := q.Insert(ctx, st, ResetRequestArgs{Email: strings.ToLower(strings.TrimSpace(email))}, nil)
	return err
}

// ResetRequestWorker works ResetRequestArgs.
type ResetRequestWorker struct {
	river.WorkerDefaults[ResetRequestArgs]
	Store  *store.Store
	Mailer *Mailer
	Log    *slog.Logger
}

// Work makes a reset link and queues its mail, in one transaction.
func (w *ResetRequestWorker) Work(ctx context.Context, job *river.Job[ResetRequestArgs]) error {
	u, err := w.Store.UserByEmail(ctx, job.Args.Email)
	if errors.Is(err, store.ErrNotFound) {
		w.Log.InfoContext(ctx, "password reset asked for an address without an account; nothing sent")
		return nil
	}
	if err != nil {
		return err
	}
	err = w.Store.InTx(ctx, func(tx *store.Store) error {
		token, err := tx.CreatePasswordReset(ctx, u.ID)
		if err != nil {
			return err
		}
		msg, err := render(resetMail, map[string]any{
			"Email": u.Email, "Link": w.Mailer.BaseURL + "/password/reset/" + token,
			"Minutes": int(store.PasswordResetTTL / time.Minute), "Forgot": w.Mailer.BaseURL + "/password/forgot",
		})
		if err != nil {
			return err
		}
		msg.To = []string{u.Email}
		msg.Subject = "Reset your Burnrate password"
		_, err = w.Mailer.Outbox.Queue(ctx, tx, 0, KindPasswordReset, msg)
		return err
	})
	if err != nil {
		return err
	}
	w.Log.InfoContext(ctx, "password reset link queued", slog.Int64("user_id", u.ID))
	return nil
}

// template is one kind of mail, as plain text and HTML.
type template struct {
	text *texttemplate.Template
	html *htmltemplate.Template
}

func newTemplate(text, html string) template {
	return template{
		text: texttemplate.Must(texttemplate.New("text").Parse(text)),
		html: htmltemplate.Must(htmltemplate.New("html").Parse(htmlFrame(html))),
	}
}

func render(t template, data map[string]any) (mail.Message, error) {
	var text, html bytes.Buffer
	if err := t.text.Execute(&text, data); err != nil {
		return mail.Message{}, fmt.Errorf("account mail: %w", err)
	}
	if err := t.html.Execute(&html, data); err != nil {
		return mail.Message{}, fmt.Errorf("account mail: %w", err)
	}
	return mail.Message{Text: text.String(), HTML: html.String()}, nil
}

// htmlFrame puts a mail's HTML body in a plain page: mail clients ignore
// style sheets, so the little styling there is is inline.
func htmlFrame(body string) string {
	return `<!DOCTYPE html><html><body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1b1f24; max-width: 36em">` +
		body + `<p style="color: #6b7280; font-size: 0.875em">Burnrate</p></body></html>`
}

var inviteMail = newTemplate(`{{.Inviter}} ({{.InviterEmail}}) invited you to join {{.Org}} on Burnrate, as {{.Role}}.

Burnrate shows what the team spends on cloud GPUs and LLM APIs, against its budgets.

Join here (the link works once, for {{.Days}} days):
{{.Link}}

If you did not expect this, ignore it: nothing happens unless you follow the link.
`, `<p>{{.Inviter}} ({{.InviterEmail}}) invited you to join <strong>{{.Org}}</strong> on Burnrate, as {{.Role}}.</p>
<p>Burnrate shows what the team spends on cloud GPUs and LLM APIs, against its budgets.</p>
<p><a href="{{.Link}}">Join {{.Org}}</a> (the link works once, for {{.Days}} days).</p>
<p>If you did not expect this, ignore it: nothing happens unless you follow the link.</p>`)

var resetMail = newTemplate(`Someone, hopefully you, asked to reset the password of the Burnrate account {{.Email}}.

Choose a new password here (the link works once, for {{.Minutes}} minutes):
{{.Link}}

Setting it logs the account out everywhere else. If you did not ask, ignore this email: your password stays as it is.
Expired? Ask for another at {{.Forgot}}
`, `<p>Someone, hopefully you, asked to reset the password of the Burnrate account {{.Email}}.</p>
<p><a href="{{.Link}}">Choose a new password</a> (the link works once, for {{.Minutes}} minutes).</p>
<p>Setting it logs the account out everywhere else. If you did not ask, ignore this email: your password stays as it is.</p>`)

var signupConfirmMail = newTemplate(`Someone, hopefully you, signed up to Burnrate with {{.Email}}.

Finish signing up here (the link works once, for {{.Hours}} hours):
{{.Link}}

If it was not you, ignore this email: no account is made until the link is used.
`, `<p>Someone, hopefully you, signed up to Burnrate with {{.Email}}.</p>
<p><a href="{{.Link}}">Finish signing up</a> (the link works once, for {{.Hours}} hours).</p>
<p>If it was not you, ignore this email: no account is made until the link is used.</p>`)

var signupNoticeMail = newTemplate(`Someone just tried to create a Burnrate account with {{.Email}}, which has one already.

If it was you, log in: {{.Login}}
Forgot your password? Reset it: {{.Forgot}}

If it was not you, there is nothing to do: no account was made and nothing changed.
`, `<p>Someone just tried to create a Burnrate account with {{.Email}}, which has one already.</p>
<p>If it was you, <a href="{{.Login}}">log in</a>. Forgot your password? <a href="{{.Forgot}}">Reset it</a>.</p>
<p>If it was not you, there is nothing to do: no account was made and nothing changed.</p>`)
