//! `gs://bucket/prefix`: Google Cloud Storage (`output.gcs`).

use super::client::{built, read_secret, require_credentials, Built, Http};
use super::error::StoreError;
use crate::config::GcsSection;
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey as K};

/// How credentials may be given, for the error when none are.
const CREDENTIALS: &str = "no credentials for this GCS store: set GOOGLE_SERVICE_ACCOUNT (the path of a service account JSON key), GOOGLE_SERVICE_ACCOUNT_KEY (the key itself) or GOOGLE_APPLICATION_CREDENTIALS in the service's environment, or name the key file with output.gcs.service_account_file; on a Compute Engine VM with a service account, set output.gcs.credentials = \"instance\"";

/// The GCS store of `url`, configured from the environment, then `output.gcs`.
pub(super) fn open(
    url: &str,
    bucket: String,
    s: &GcsSection,
    http: Http,
) -> Result<Built, StoreError> {
    let mut b = GoogleCloudStorageBuilder::from_env()
        .with_bucket_name(bucket)
        .with_retry(http.retry)
        .with_client_options(http.client);
    if !s.service_account_file.is_empty() {
        // Read here too, so that a missing file is named with its key.
        let key = "output.gcs.service_account_file";
        read_secret(url, key, &s.service_account_file)?;
        b = b.with_service_account_path(&s.service_account_file);
    }
    require_credentials(url, s.credentials, has_credentials(&b), CREDENTIALS)?;
    built(url, b.build())
}

fn has_credentials(b: &GoogleCloudStorageBuilder) -> bool {
    let has = |k: K| b.get_config_value(&k).is_some_and(|v| !v.is_empty());
    // gcloud's application default credentials, which the builder reads too.
    let adc = std::env::var_os("HOME").is_some_and(|h| {
        std::path::Path::new(&h)
            .join(".config/gcloud/application_default_credentials.json")
            .exists()
    });
    has(K::ServiceAccount)
        || has(K::ServiceAccountKey)
        || has(K::ApplicationCredentials)
        || b.get_config_value(&K::SkipSignature).as_deref() == Some("true")
        || adc
}
