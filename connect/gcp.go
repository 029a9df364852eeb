package connect

import (
	"context"
	"crypto/x509"
	"encoding/csv"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/bigquery"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/burnrate/burnrate/ingest"
)

// A GCP connection reads the Cloud Billing export Google writes to BigQuery
// (docs/connections.md, "GCP"): the standard (gcp_billing_export_v1_…) or
// detailed (gcp_billing_export_resource_v1_…) table, with the official
// client, signed in as the service account whose key the org gave. Each
// sync runs one query over the partitions written since the days it
// restates, flattens the rows as the gcp-billing importer reads them
// (credits as charges of their own), and imports them as gcp-bigquery,
// whose rows replace those of the days pulled again.
//
// The client is built from the key alone: an HTTP client of ours, signing
// with a token source made from the key's JSON, given to the BigQuery
// client with option.WithHTTPClient, so that the library never looks for
// the host's credentials (application default credentials, the metadata
// server, GOOGLE_APPLICATION_CREDENTIALS). The key's own token_uri is not
// used either: tokens come from Google's endpoint (or the operator's,
// GOOGLE_TOKEN_URL), never from an address the key names.

// Google's endpoints.
const (
	BigQueryURL    = "https://bigquery.googleapis.com/bigquery/v2/"
	GoogleTokenURL = "https://oauth2.googleapis.com/token"
)

// maxServiceAccountBytes bounds a service account key: Google's are 2–3 KB.
const maxServiceAccountBytes = 16 << 10

type gcpExport struct{}

// serviceAccount is what a key's JSON must hold.
type serviceAccount struct {
	Type         string `json:"type"`
	ProjectID    string `json:"project_id"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	ClientEmail  string `json:"client_email"`
}

var (
	gcpProject = regexp.MustCompile(`^(?:[a-z0-9.-]{1,63}:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	// Datasets and tables of an export: letters, digits, underscores
	// (BigQuery allows 1,024; names this long are typos).
	gcpDataset = regexp.MustCompile(`^[A-Za-z0-9_]{1,256}$`)
	gcpTable   = regexp.MustCompile(`^[A-Za-z0-9_]{1,256}$`)
)

// parseServiceAccount checks a service account key's JSON: a key of type
// service_account, with an email and an RSA private key in PEM.
func parseServiceAccount(js string) (serviceAccount, error) {
	var sa serviceAccount
	if len(js) > maxServiceAccountBytes {
		return sa, &InputError{"service_account_json", fmt.Sprintf("a service account key is a few kilobytes of JSON, not over %d KB", maxServiceAccountBytes>>10)}
	}
	if err := json.Unmarshal([]byte(js), &sa); err != nil {
		return sa, &InputError{"service_account_json", "paste the service account's key file as it was downloaded (JSON)"}
	}
	if sa.Type != "service_account" {
		return sa, &InputError{"service_account_json", fmt.Sprintf("the JSON is a key of type %q: create a key for a service account (type service_account)", sa.Type)}
	}
	if !strings.Contains(sa.ClientEmail, "@") || len(sa.ClientEmail) > 254 {
		return sa, &InputError{"service_account_json", "the key has no client_email"}
	}
	block, _ := pem.Decode([]byte(sa.PrivateKey))
	if block == nil {
		return sa, &InputError{"service_account_json", "the key's private_key is not a PEM private key"}
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			return sa, &InputError{"service_account_json", "the key's private_key cannot be read as an RSA key"}
		}
	}
	return sa, nil
}

// gcpTableRef is project.dataset.table.
type gcpTableRef struct{ project, dataset, table string }

func (t gcpTableRef) String() string { return t.project + "." + t.dataset + "." + t.table }

func parseGCPTable(s string) (gcpTableRef, error) {
	s = strings.Trim(strings.TrimSpace(s), "`")
	// A domain-scoped project holds a dot of its own: the last two dots
	// part the dataset and the table.
	last := strings.LastIndexByte(s, '.')
	if last > 0 {
		if mid := strings.LastIndexByte(s[:last], '.'); mid > 0 {
			t := gcpTableRef{s[:mid], s[mid+1 : last], s[last+1:]}
			if gcpProject.MatchString(t.project) && gcpDataset.MatchString(t.dataset) && gcpTable.MatchString(t.table) {
				return t, nil
			}
		}
	}
	return gcpTableRef{}, &InputError{"table", "the export table as project.dataset.table, such as my-project.billing.gcp_billing_export_v1_012345_6789AB_CDEF01"}
}

func (in Input) validateGCP(now time.Time) (Settings, Credentials, error) {
	var errs []error
	set := Settings{Table: strings.Trim(strings.TrimSpace(in.Table), "`")}
	if _, err := parseGCPTable(set.Table); err != nil {
		errs = append(errs, err)
	}
	cred := Credentials{ServiceAccountJSON: strings.TrimSpace(in.ServiceAccountJSON)}
	if _, err := parseServiceAccount(cred.ServiceAccountJSON); err != nil {
		errs = append(errs, err)
	}
	var err error
	if set.StartDate, set.RestateDays, err = in.schedule(now); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return set, cred, errors.Join(errs...)
	}
	return set, cred, nil
}

// bigQueryURL is the API's base as the client takes it, with its
// trailing slash (BIGQUERY_API_URL may be written without one).
func (s *Service) bigQueryURL() string {
	if s.BigQueryURL != "" {
		return strings.TrimRight(s.BigQueryURL, "/") + "/"
	}
	return BigQueryURL
}

func (s *Service) googleTokenURL() string {
	if s.GoogleTokenURL != "" {
		return s.GoogleTokenURL
	}
	return GoogleTokenURL
}

// client returns a BigQuery client signed in as the key's service account,
// running its jobs in the key's project (else the table's), and the
// export's table.
func (gcpExport) client(ctx context.Context, s *Service, p pull) (*bigquery.Client, gcpTableRef, error) {
	ref, err := parseGCPTable(p.set.Table)
	if err != nil {
		return nil, ref, err
	}
	sa, err := parseServiceAccount(p.cred.ServiceAccountJSON)
	if err != nil {
		return nil, ref, err
	}
	cfg, err := google.JWTConfigFromJSON([]byte(p.cred.ServiceAccountJSON), bigquery.Scope)
	if err != nil {
		return nil, ref, &InputError{"service_account_json", "the key cannot be used: " + clip(err.Error(), 120)}
	}
	cfg.TokenURL = s.googleTokenURL()
	base := http.DefaultTransport
	if s.HTTP != nil && s.HTTP.Transport != nil {
		base = s.HTTP.Transport
	}
	plain := &http.Client{Transport: base, Timeout: CallTimeout}
	ts := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, plain))
	signed := &http.Client{Transport: &oauth2.Transport{Source: ts, Base: base}, Timeout: CallTimeout}
	project := sa.ProjectID
	if project == "" {
		project = ref.project
	}
	c, err := bigquery.NewClient(ctx, project, option.WithHTTPClient(signed), option.WithEndpoint(s.bigQueryURL()))
	if err != nil {
		return nil, ref, gcpError(err, "connect")
	}
	return c, ref, nil
}

// gcpColumns are the export's fields a pull reads, each as the CSV column
// the gcp-billing parser reads it from, and the SQL that selects it as
// text (BigQuery writes FLOAT64 as the shortest decimal that is the same
// number; nothing here turns money into a float). Optional fields are
// read when the table has them (the detailed export's resource, newer
// exports' cost_at_list).
var gcpColumns = []struct {
	name, field, sql string
	optional         bool
}{
	{"billing_account_id", "billing_account_id", "billing_account_id", false},
	{"invoice.month", "invoice.month", "invoice.month", false},
	{"cost_type", "cost_type", "cost_type", false},
	{"service.id", "service.id", "service.id", false},
	{"service.description", "service.description", "service.description", false},
	{"sku.id", "sku.id", "sku.id", false},
	{"sku.description", "sku.description", "sku.description", false},
	{"usage_start_time", "usage_start_time", "FORMAT_TIMESTAMP('%Y-%m-%dT%H:%M:%E6SZ', usage_start_time)", false},
	{"usage_end_time", "usage_end_time", "FORMAT_TIMESTAMP('%Y-%m-%dT%H:%M:%E6SZ', usage_end_time)", false},
	{"project.id", "project.id", "project.id", false},
	{"project.name", "project.name", "project.name", false},
	{"project.labels", "project.labels", "TO_JSON_STRING(project.labels)", false},
	{"labels", "labels", "TO_JSON_STRING(labels)", false},
	{"system_labels", "system_labels", "TO_JSON_STRING(system_labels)", false},
	{"location.location", "location.location", "location.location", false},
	{"location.region", "location.region", "location.region", false},
	{"cost", "cost", "CAST(cost AS STRING)", false},
	{"currency", "currency", "currency", false},
	{"cost_at_list", "cost_at_list", "CAST(cost_at_list AS STRING)", true},
	{"usage.amount", "usage.amount", "CAST(usage.amount AS STRING)", false},
	{"usage.unit", "usage.unit", "usage.unit", false},
	{"usage.amount_in_pricing_units", "usage.amount_in_pricing_units", "CAST(usage.amount_in_pricing_units AS STRING)", false},
	{"usage.pricing_unit", "usage.pricing_unit", "usage.pricing_unit", false},
	{"resource.global_name", "resource.global_name", "resource.global_name", true},
	{"credits", "credits", "TO_JSON_STRING(credits)", false},
}

// gcpQuery is the one query a pull runs. The filter on _PARTITIONTIME
// keeps what BigQuery reads (and bills) to the partitions written since
// the first day restated: a row is exported after its usage, so every row
// of those days is in them.
func gcpQuery(ref gcpTableRef, has func(field string) bool) (sql string, header []string) {
	var sel []string
	for _, c := range gcpColumns {
		if c.optional && !has(c.field) {
			continue
		}
		sel = append(sel, c.sql+" AS `"+strings.ReplaceAll(c.name, ".", "_")+"`")
		header = append(header, c.name)
	}
	order := make([]string, len(header))
	for i, h := range header {
		order[i] = "`" + strings.ReplaceAll(h, ".", "_") + "`"
	}
	sql = "SELECT " + strings.Join(sel, ", ") + "\nFROM `" + ref.String() + "`\n" +
		"WHERE _PARTITIONTIME >= TIMESTAMP(@from) AND usage_start_time >= TIMESTAMP(@from) AND usage_start_time < TIMESTAMP(@to)\n" +
		"ORDER BY " + strings.Join(order, ", ")
	return sql, header
}

// schemaFields lists a table's fields by their dotted names.
func schemaFields(s bigquery.Schema, prefix string, into map[string]bool) {
	for _, f := range s {
		into[prefix+f.Name] = true
		if f.Type == bigquery.RecordFieldType {
			schemaFields(f.Schema, prefix+f.Name+".", into)
		}
	}
}

// gcpRun is one pull's query, run: its job's statistics and its rows.
type gcpRun struct {
	header      []string
	rows        *bigquery.RowIterator
	bytesBilled int64
}

// run runs the pull's query over [from, to) and waits for it.
func (gcpExport) run(ctx context.Context, c *bigquery.Client, ref gcpTableRef, from, to time.Time) (gcpRun, error) {
	md, err := c.DatasetInProject(ref.project, ref.dataset).Table(ref.table).Metadata(ctx)
	if err != nil {
		return gcpRun{}, gcpError(err, "read the schema of table "+ref.String())
	}
	fields := map[string]bool{}
	schemaFields(md.Schema, "", fields)
	for _, need := range []string{"cost", "usage_start_time", "credits", "service", "sku", "project", "labels"} {
		if !fields[need] {
			return gcpRun{}, &ProviderError{Provider: "BigQuery", Status: http.StatusOK,
				Msg: fmt.Sprintf("table %s has no %s column: it is not a Cloud Billing export (the standard or detailed usage cost table)", ref, need)}
		}
	}
	sql, header := gcpQuery(ref, func(f string) bool { return fields[f] })
	q := c.Query(sql)
	q.Parameters = []bigquery.QueryParameter{
		{Name: "from", Value: civilDate(from)},
		{Name: "to", Value: civilDate(to)},
	}
	job, err := q.Run(ctx)
	if err != nil {
		return gcpRun{}, gcpError(err, "run the query")
	}
	status, err := job.Wait(ctx)
	if err == nil {
		err = status.Err()
	}
	if err != nil {
		return gcpRun{}, gcpError(err, "run the query")
	}
	r := gcpRun{header: header}
	if status.Statistics != nil {
		if qs, ok := status.Statistics.Details.(*bigquery.QueryStatistics); ok {
			r.bytesBilled = qs.TotalBytesBilled
		}
	}
	if r.rows, err = job.Read(ctx); err != nil {
		return gcpRun{}, gcpError(err, "read the query's results")
	}
	return r, nil
}

// civilDate is t's day as the DATE parameter BigQuery takes.
func civilDate(t time.Time) string { return t.Format(time.DateOnly) }

func (e gcpExport) files(ctx context.Context, s *Service, p pull) ([]File, error) {
	c, ref, err := e.client(ctx, s, p)
	if err != nil {
		return nil, err
	}
	from, to := p.window()
	r, err := e.run(ctx, c, ref, from, to)
	if err != nil {
		c.Close()
		return nil, err
	}
	billed := r.bytesBilled
	done := func(st *State) { st.BytesBilled = &billed }
	if r.rows.TotalRows == 0 {
		c.Close()
		return []File{{Name: "empty", Skip: true, Done: done}}, nil
	}
	name := fmt.Sprintf("%s %s to %s.csv", ref.table, from.Format(time.DateOnly), to.AddDate(0, 0, -1).Format(time.DateOnly))
	return []File{{
		Name: name, Source: ingest.SourceGCPBigQuery, Rows: int(min(r.rows.TotalRows, 1<<31-1)), Done: done,
		Open: func(ctx context.Context) (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			go func() {
				defer c.Close()
				pw.CloseWithError(writeGCPRows(pw, r))
			}()
			return pr, nil
		},
	}}, nil
}

// writeGCPRows writes the query's rows as the gcp-billing CSV, page by page
// as the client reads them: every usage row with its credits taken out,
// then each credit as a row of its own (cost_type "credit", the credit's
// name as its SKU, the usage row's service, project and labels), so that a
// day's total is the bill's and a credit can be seen as one.
func writeGCPRows(w io.Writer, r gcpRun) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.header); err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range r.header {
		col[h] = i
	}
	rec := make([]string, len(r.header))
	for {
		var vals []bigquery.Value
		err := r.rows.Next(&vals)
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return gcpError(err, "read the query's results")
		}
		if len(vals) != len(rec) {
			return &ProviderError{Provider: "BigQuery", Status: http.StatusOK, Msg: fmt.Sprintf("a result row has %d fields, the query %d", len(vals), len(rec))}
		}
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				rec[i] = ""
			case string:
				rec[i] = v
			default:
				return &ProviderError{Provider: "BigQuery", Status: http.StatusOK, Msg: fmt.Sprintf("result field %s is not text", r.header[i])}
			}
		}
		credits, err := gcpCredits(rec[col["credits"]])
		if err != nil {
			return err
		}
		rec[col["credits"]] = ""
		if err := cw.Write(rec); err != nil {
			return err
		}
		usage := map[string]string{}
		for _, k := range []string{"cost", "cost_at_list", "usage.amount", "usage.amount_in_pricing_units", "cost_type", "sku.id", "sku.description", "system_labels"} {
			if i, ok := col[k]; ok {
				usage[k] = rec[i]
			}
		}
		for _, cr := range credits {
			name := cr.FullName
			if name == "" {
				name = cr.Name
			}
			set := func(k, v string) {
				if i, ok := col[k]; ok {
					rec[i] = v
				}
			}
			set("cost", cr.Amount.String())
			set("cost_at_list", "0")
			set("usage.amount", "")
			set("usage.amount_in_pricing_units", "")
			set("cost_type", "credit")
			set("sku.id", cr.ID)
			set("sku.description", strings.TrimSpace("Credit: "+name))
			set("system_labels", "")
			if err := cw.Write(rec); err != nil {
				return err
			}
			for k, v := range usage {
				set(k, v)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// gcpCredit is one entry of a row's credits.
type gcpCredit struct {
	Name     string      `json:"name"`
	FullName string      `json:"full_name"`
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Amount   json.Number `json:"amount"`
}

// gcpCredits reads a row's credits, as TO_JSON_STRING wrote them; the
// amounts stay as written, for the importer's bounded parser.
func gcpCredits(s string) ([]gcpCredit, error) {
	if s == "" || s == "[]" || s == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out []gcpCredit
	if err := dec.Decode(&out); err != nil {
		return nil, &ProviderError{Provider: "BigQuery", Status: http.StatusOK, Msg: "a row's credits are not the export's list of credits: " + clip(err.Error(), 120)}
	}
	kept := out[:0]
	for _, c := range out {
		if c.Amount != "" && c.Amount != "0" {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

func (e gcpExport) test(ctx context.Context, s *Service, p pull) error {
	c, ref, err := e.client(ctx, s, p)
	if err != nil {
		return err
	}
	defer c.Close()
	// The table's schema proves the key signs in and may read the
	// dataset; a dry run proves it may run the query, at no cost.
	md, err := c.DatasetInProject(ref.project, ref.dataset).Table(ref.table).Metadata(ctx)
	if err != nil {
		return gcpError(err, "read the schema of table "+ref.String())
	}
	fields := map[string]bool{}
	schemaFields(md.Schema, "", fields)
	if !fields["cost"] || !fields["usage_start_time"] {
		return &ProviderError{Provider: "BigQuery", Status: http.StatusOK, Msg: fmt.Sprintf("table %s is not a Cloud Billing export", ref)}
	}
	return nil
}

// gcpError says what a refusal from Google means for the action tried.
func gcpError(err error, action string) error {
	if err == nil {
		return nil
	}
	var ie *InputError
	var pe *ProviderError
	if errors.As(err, &ie) || errors.As(err, &pe) {
		return err
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		code := re.ErrorCode
		if code == "" {
			// The JWT flow does not read the error out of the body.
			var body struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(re.Body, &body) == nil && body.Error != "" {
				code = clip(body.Error, 60)
			} else {
				code = "refused"
			}
		}
		return &ProviderError{Provider: "Google sign-in", Status: status,
			Msg: fmt.Sprintf("the service account key was refused (%s): it was deleted or disabled, or the service account was; create a new key and save the connection again", code)}
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		reason := ""
		if len(ge.Errors) > 0 {
			reason = ge.Errors[0].Reason
		}
		msg := clip(ge.Message, 200)
		switch {
		case ge.Code == http.StatusUnauthorized:
			msg = "the service account could not sign in: " + msg
		case ge.Code == http.StatusForbidden && (reason == "accessDenied" || reason == ""):
			msg = "the service account may not " + action + " (" + msg + "): grant it BigQuery Data Viewer on the export's dataset and BigQuery Job User on its project"
		case ge.Code == http.StatusForbidden:
			msg = reason + ": " + msg
		case ge.Code == http.StatusNotFound:
			msg = "not found, trying to " + action + ": " + msg
		case ge.Code == http.StatusBadRequest:
			msg = "BigQuery refused to " + action + ": " + msg
		}
		return &ProviderError{Provider: "BigQuery", Status: ge.Code, Msg: msg}
	}
	if msg, ok := unreachable(err, ""); ok {
		return &ProviderError{Provider: "BigQuery", Msg: msg}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ProviderError{Provider: "BigQuery", Msg: action + " timed out"}
	}
	return &ProviderError{Provider: "BigQuery", Msg: action + ": " + clip(err.Error(), 200)}
}

// gcpHint is what pages show of a service account key: the account, and
// the key's id, which name the key without giving it away.
func gcpHint(js string) string {
	var sa serviceAccount
	if json.Unmarshal([]byte(js), &sa) != nil {
		return "service account key"
	}
	id := sa.PrivateKeyID
	if len(id) > 8 {
		id = id[:8]
	}
	if id == "" {
		return sa.ClientEmail
	}
	return sa.ClientEmail + " (key " + id + "…)"
}
