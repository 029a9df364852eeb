package notify

import (
	"encoding/json"
	"strings"
)

// Slack's limits on the parts of a message (Block Kit): longer text is
// refused, so it is cut to fit.
const (
	slackHeaderMax  = 150
	slackSectionMax = 3000
	slackURLMax     = 3000
)

// slackBody is nt as a Slack incoming-webhook message: "text" is what
// notifications and clients without blocks show; the blocks are a header
// (the subject), a section (the text) and a button to the link.
func slackBody(nt Notification) ([]byte, error) {
	fallback := slackEscape(nt.Subject)
	if nt.Text != "" {
		fallback += "\n" + slackEscape(nt.Text)
	}
	if nt.Link != "" {
		fallback += "\n<" + slackEscape(nt.Link) + "|Open in Burnrate>"
	}
	blocks := []map[string]any{{
		"type": "header",
		"text": map[string]any{"type": "plain_text", "text": truncate(nt.Subject, slackHeaderMax-3), "emoji": true},
	}}
	if nt.Text != "" {
		blocks = append(blocks, map[string]any{
			"type": "section",
			"text": map[string]any{"type": "mrkdwn", "text": truncate(slackEscape(nt.Text), slackSectionMax-3)},
		})
	}
	if nt.Link != "" && len(nt.Link) <= slackURLMax {
		blocks = append(blocks, map[string]any{
			"type": "actions",
			"elements": []map[string]any{{
				"type": "button",
				"text": map[string]any{"type": "plain_text", "text": "Open in Burnrate"},
				"url":  nt.Link,
			}},
		})
	}
	return json.Marshal(map[string]any{"text": fallback, "blocks": blocks})
}

// slackEscape escapes the three characters Slack's mrkdwn gives meaning to,
// so that a budget named "<!channel>" does not ping the channel.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
