//! `[output.s3]`, `[output.azure]` and `[output.gcs]`: how to reach a cloud
//! store. Secrets come from the environment or from files, never from the
//! config file.

use crate::config::error::Problems;
use crate::config::schema::keys::{Setting, Ty};
use serde::{Deserialize, Serialize};

crate::config::section! {
    /// `[output.s3]`. Credentials come from `AWS_ACCESS_KEY_ID` /
    /// `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN` (and the rest of the AWS
    /// environment), or from the files named here — never from this file.
    #[serde(deny_unknown_fields)]
    pub struct S3Section {
        /// Endpoint URL for S3-compatible servers (MinIO, Ceph, …): `https://…`,
        /// or `http://…` with `allow_http`; empty for AWS.
        endpoint: String = String::new(),
        /// Region (empty: `AWS_REGION`, else "us-east-1").
        region: String = String::new(),
        /// Path-style requests (`endpoint/bucket/key`), needed by most S3-compatible servers.
        path_style: bool = false,
        /// Allow plain `http://` endpoints (test servers only).
        allow_http: bool = false,
        /// File holding the access key id.
        access_key_id_file: String = String::new(),
        /// File holding the secret access key.
        secret_access_key_file: String = String::new(),
        /// `"explicit"`: keys from the environment or the files above;
        /// start-up refuses when there are none. `"instance"`: without them, ask
        /// the EC2 instance metadata service (an instance profile).
        credentials: Credentials = Credentials::Explicit,
    }
}

/// `credentials` of the cloud store sections: where a store's credentials
/// may come from. Its names are checked by the schema walker, so a parsed
/// file holds one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Credentials {
    /// From the environment or the files the section names; start-up
    /// refuses a store without them.
    Explicit,
    /// Without them, from the cloud's instance metadata service.
    Instance,
}

impl Setting for Credentials {
    const TY: Ty = Ty::Choice(
        &["explicit", "instance"],
        "\"explicit\" (credentials from the environment or files) or \"instance\" (the cloud's instance metadata service)",
    );
}

crate::config::section! {
    /// `[output.azure]`. The key comes from `AZURE_STORAGE_ACCOUNT_KEY` or the
    /// file named here.
    #[serde(deny_unknown_fields)]
    pub struct AzureSection {
        /// Storage account name (empty: `AZURE_STORAGE_ACCOUNT_NAME`).
        account: String = String::new(),
        /// Blob endpoint URL for emulators and sovereign clouds; empty for Azure.
        endpoint: String = String::new(),
        /// Allow plain `http://` endpoints (test servers only).
        allow_http: bool = false,
        /// File holding the account key.
        access_key_file: String = String::new(),
        /// `"explicit"`: a key, SAS token or service principal from the
        /// environment, or the file above. `"instance"`: without them, use the
        /// VM's managed identity (instance metadata service).
        credentials: Credentials = Credentials::Explicit,
    }
}

crate::config::section! {
    /// `[output.gcs]`. Credentials from `GOOGLE_SERVICE_ACCOUNT` or the file named here.
    #[serde(deny_unknown_fields)]
    pub struct GcsSection {
        /// Service account JSON key file.
        service_account_file: String = String::new(),
        /// `"explicit"`: a service account key from the environment, the file
        /// above or gcloud's application default credentials. `"instance"`:
        /// without them, use the VM's service account (metadata server).
        credentials: Credentials = Credentials::Explicit,
    }
}

/// Checks that each cloud section present matches the scheme of `store`
/// (`output.store`), and its `credentials`.
pub(super) fn check(
    p: &mut Problems,
    store: &str,
    s3: &Option<S3Section>,
    azure: &Option<AzureSection>,
    gcs: &Option<GcsSection>,
) {
    let sections = [
        ("output.s3", "s3", s3.is_some()),
        ("output.azure", "az", azure.is_some()),
        ("output.gcs", "gs", gcs.is_some()),
    ];
    let scheme = store.split("://").next().unwrap_or("");
    for (section, wanted, present) in sections {
        p.check(!present || scheme == wanted, || {
            format!(
                "[{section}]: only used with a {wanted}:// store, but output.store is {store:?}"
            )
        });
    }
    if let Some(s) = s3 {
        check_endpoint(
            p,
            "output.s3",
            &s.endpoint,
            s.allow_http,
            "http://127.0.0.1:9000",
        );
    }
    if let Some(a) = azure {
        let example = "http://127.0.0.1:10000/devstoreaccount1";
        check_endpoint(p, "output.azure", &a.endpoint, a.allow_http, example);
    }
}

/// Checks a cloud section's `endpoint` (empty: the cloud's own): an
/// `http://` or `https://` URL with a host, and `allow_http` set for
/// `http://`. Without the scheme the HTTP client cannot start; with plain
/// HTTP not allowed, every upload fails. Both only after start-up, so
/// they are refused here.
fn check_endpoint(
    p: &mut Problems,
    section: &str,
    endpoint: &str,
    allow_http: bool,
    example: &str,
) {
    if endpoint.is_empty() {
        return;
    }
    let url = match url::Url::parse(endpoint) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => url,
        _ => {
            return p.push(format!(
                "{section}.endpoint: {endpoint:?} must be a URL with http:// or https:// and a host, e.g. \"{example}\""
            ))
        }
    };
    p.check(url.scheme() == "https" || allow_http, || {
        format!(
            "{section}.endpoint: {endpoint:?} is plain HTTP, which is refused unless {section}.allow_http = true (test servers only); or use https://"
        )
    });
}
