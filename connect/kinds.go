package connect

import "time"

// Kinds of connection, as stored and typed.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindS3        = "aws-s3"
	KindAzure     = "azure-blob"
	KindGCP       = "gcp-bigquery"
)

// kind is everything package connect knows of one kind of connection, in
// one place: a new kind is one entry of registry (and its own file for
// validate and the puller). The pages' form fields, the detail a row shows
// and the command's flags are still written per kind in web and
// cmd/burnrate.
type kind struct {
	name  string // as stored and typed
	label string // as pages and mail name it
	// keyField is the input field the kind takes its key in, named when a
	// connection without a key of its own is refused (policy.go).
	keyField string
	// windowed kinds pull a date window each sync (usage APIs, a
	// BigQuery table): a sync that ends well moves SyncedThrough to the
	// window's end. File exports keep their own state per file instead.
	windowed bool
	// validate checks the kind's own fields and returns the settings and
	// credentials to save.
	validate func(in Input, now time.Time) (Settings, Credentials, error)
	// puller pulls the kind's files and tests its credentials.
	puller puller
}

// registry lists every kind, in the order pages and commands offer them.
var registry = []kind{
	{name: KindOpenAI, label: "OpenAI", keyField: "api_key", windowed: true, validate: Input.validateAdminAPI, puller: openAI{}},
	{name: KindAnthropic, label: "Anthropic", keyField: "api_key", windowed: true, validate: Input.validateAdminAPI, puller: anthropic{}},
	{name: KindS3, label: "AWS S3", keyField: "access_key_id",
		validate: func(in Input, _ time.Time) (Settings, Credentials, error) { return in.validateS3() }, puller: s3Export{}},
	{name: KindAzure, label: "Azure", keyField: "account_key",
		validate: func(in Input, _ time.Time) (Settings, Credentials, error) { return in.validateAzure() }, puller: azureExport{}},
	{name: KindGCP, label: "GCP BigQuery", keyField: "service_account_json", windowed: true, validate: Input.validateGCP, puller: gcpExport{}},
}

// kindOf is the registry's entry for name.
func kindOf(name string) (kind, bool) {
	for _, k := range registry {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

// Kinds lists the kinds of connection, as stored and typed.
func Kinds() []string {
	out := make([]string, len(registry))
	for i, k := range registry {
		out[i] = k.name
	}
	return out
}

// KindLabel is how pages and mail name kind ("AWS S3"); an unknown kind
// is named as stored.
func KindLabel(name string) string {
	if k, ok := kindOf(name); ok {
		return k.label
	}
	return name
}
