package llm

import (
	"slices"
	"testing"
)

// A base URL's credentials are redacted where a run writes (a proxy may
// echo the request's path); its other query parameters are not, or their
// values (a date) would vanish from every answer.
func TestURLSecrets(t *testing.T) {
	tests := []struct {
		url  string
		want []string
	}{
		{"http://127.0.0.1:11434/v1", nil},
		{"https://x.example/v1?api-key=QUERYSECRET777", []string{"QUERYSECRET777"}},
		{"https://x.example/openai?api-version=2024-06-01&Token=t0k3n-value", []string{"t0k3n-value"}},
		{"https://user:pa55word-long@x.example/v1?code=fn-code-123&sig=abc", []string{"pa55word-long", "dXNlcjpwYTU1d29yZC1sb25n", "abc", "fn-code-123"}},
		// Echoed as sent (encoded) as well as decoded; a pair that does
		// not decode is a secret too.
		{"https://x.example/v1?api_key=AbC%2BdEf%2FgHi12345", []string{"AbC%2BdEf%2FgHi12345", "AbC+dEf/gHi12345"}},
		{"https://x.example/v1?token=tok+en9876543210", []string{"tok+en9876543210", "tok en9876543210"}},
		{"https://x.example/v1?api_key=Tok3n%zzVal99&api-version=1", []string{"Tok3n%zzVal99"}},
		{"https://x.example/v1?Api%5FKey=enc0ded-name-key", []string{"enc0ded-name-key"}},
		// A token given as the user name alone is the credential (Go
		// sends it as Basic auth, TOKEN: in base64); with a password,
		// the user name is not.
		{"http://TKSECRETd@127.0.0.1:1/v1", []string{"TKSECRETd", "VEtTRUNSRVRkOg=="}},
		{"http://TKSECRETd:@127.0.0.1:1/v1", []string{"TKSECRETd", "VEtTRUNSRVRkOg=="}},
		{"http://bob:pw-secret-1@h/v1", []string{"pw-secret-1", "Ym9iOnB3LXNlY3JldC0x"}},
		{"http://:@h/v1", nil},
		// The names well-known redactors treat as credentials.
		{"https://x.example/v1?pwd=PWDSECRETe&jwt=JWTSECRETf&pw=PWSECRETh&credential=CREDSECRETi",
			[]string{"PWDSECRETe", "JWTSECRETf", "PWSECRETh", "CREDSECRETi"}},
		{"https://x.example/v1?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc1&cookie=c1&_csrf=c2&Passwd=p1",
			[]string{"AKIA%2F1", "AKIA/1", "abc1", "c1", "c2", "p1"}},
		{"https://x.example/v1?api-version=2024-06-01&model=m&user=u&pwx=1&sidecar=2&session_id=newsletter-weekly&sid=12345678", nil},
		{"://not a url", nil},
	}
	for _, tt := range tests {
		got := URLSecrets(tt.url)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("URLSecrets(%q) = %q, want %q", tt.url, got, want)
		}
	}
}
