//! `az://container/prefix`: Azure Blob Storage and Azurite (`output.azure`).

use super::client::{built, read_secret, require_credentials, Built, Http};
use super::error::StoreError;
use crate::config::AzureSection;
use object_store::azure::{AzureConfigKey as K, MicrosoftAzureBuilder};

/// How credentials may be given, for the error when none are.
const CREDENTIALS: &str = "no credentials for this Azure store: set AZURE_STORAGE_ACCOUNT_KEY (or AZURE_STORAGE_SAS_TOKEN, or a service principal: AZURE_CLIENT_ID, AZURE_CLIENT_SECRET and AZURE_TENANT_ID) in the service's environment, or name a file holding the account key with output.azure.access_key_file; on an Azure VM with a managed identity, set output.azure.credentials = \"instance\"";

/// The Azure store of `url`, configured from the environment, then `output.azure`.
pub(super) fn open(
    url: &str,
    container: String,
    s: &AzureSection,
    http: Http,
) -> Result<Built, StoreError> {
    let mut b = MicrosoftAzureBuilder::from_env()
        .with_container_name(container)
        .with_retry(http.retry)
        .with_client_options(http.client.with_allow_http(s.allow_http))
        .with_allow_http(s.allow_http);
    if !s.account.is_empty() {
        b = b.with_account(&s.account);
    }
    if !s.endpoint.is_empty() {
        b = b.with_endpoint(s.endpoint.clone());
    }
    if let Some(k) = read_secret(url, "output.azure.access_key_file", &s.access_key_file)? {
        b = b.with_access_key(k);
    }
    require_credentials(url, s.credentials, has_credentials(&b), CREDENTIALS)?;
    built(url, b.build())
}

fn has_credentials(b: &MicrosoftAzureBuilder) -> bool {
    let has = |k: K| b.get_config_value(&k).is_some_and(|v| !v.is_empty());
    let on = |k: K| b.get_config_value(&k).as_deref() == Some("true");
    has(K::AccessKey)
        || has(K::Token)
        || has(K::SasKey)
        || (has(K::ClientId)
            && has(K::AuthorityId)
            && (has(K::ClientSecret) || has(K::FederatedTokenFile)))
        || has(K::MsiEndpoint)
        || has(K::CredentialType)
        || on(K::UseAzureCli)
        || on(K::UseEmulator)
        || on(K::SkipSignature)
}
