package host

import "testing"

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://docs.example.com/a?page=2", "https://docs.example.com/a?page=2"},
		{"https://docs.example.com/a?access_token=abc&page=2", "https://docs.example.com/a?access_token=REDACTED&page=2"},
		{"https://docs.example.com/a?API-Key=abc", "https://docs.example.com/a?API-Key=REDACTED"},
		{"https://docs.example.com/a?my_api_token=abc&q=token", "https://docs.example.com/a?my_api_token=REDACTED&q=token"},
		{"https://s3.example.com/o?X-Amz-Signature=ff&X-Amz-Credential=AK%2F1", "https://s3.example.com/o?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"},
		{"https://user:pass@docs.example.com/", "https://docs.example.com/"},
		{"https://app.example.com/cb#access_token=abc&state=1", "https://app.example.com/cb#access_token=REDACTED&state=1"},
		{"https://docs.example.com/a#section-2", "https://docs.example.com/a#section-2"},
		{"https://docs.example.com/a?sig", "https://docs.example.com/a?sig"},
		{"https://docs.example.com/a?%73ecret=x", "https://docs.example.com/a?%73ecret=REDACTED"},
		{"::not a url", ""},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
