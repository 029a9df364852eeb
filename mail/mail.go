// Package mail is how Burnrate writes to people: the digest, budget alerts,
// invites and password resets are each built as a Message and handed to a
// Sender. With SMTP_URL set the Sender delivers over SMTP; without it, mail
// is kept in the outbox (shown in the app and the log) so that an install
// without mail still shows what it would have sent.
package mail

import "context"

// Message is one email: a plain-text body always, an HTML body when the
// message has one, and inline parts the HTML refers to by Content-ID
// (<img src="cid:chart">).
type Message struct {
	To      []string
	Subject string
	Text    string
	HTML    string // empty: a text-only message
	Inline  []Part
	// Headers are extra headers, such as List-Unsubscribe and
	// List-Unsubscribe-Post (RFC 8058) on the digest.
	Headers map[string]string
}

// Part is an inline attachment.
type Part struct {
	ContentID   string // referred to as cid:ContentID
	Filename    string
	ContentType string // image/png
	Data        []byte
}

// Sender delivers a message or says why it could not; a Sender is safe for
// concurrent use.
type Sender interface {
	Send(ctx context.Context, m Message) error
}
