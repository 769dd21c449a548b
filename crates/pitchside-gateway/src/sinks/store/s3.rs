//! `s3://bucket/prefix`: Amazon S3 and S3-compatible servers (`output.s3`).

use super::client::{built, read_secret, require_credentials, Built, Http};
use super::error::StoreError;
use crate::config::S3Section;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey as K};

/// How credentials may be given, for the error when none are.
const CREDENTIALS: &str = "no credentials for this S3 store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys) in the service's environment, or name files holding them with output.s3.access_key_id_file and output.s3.secret_access_key_file (web identity, AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, and ECS task roles, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, work too); on an EC2 instance with an instance profile, set output.s3.credentials = \"instance\"";

/// The S3 store of `url`, configured from the environment, then `output.s3`.
pub(super) fn open(
    url: &str,
    bucket: String,
    s: &S3Section,
    http: Http,
) -> Result<Built, StoreError> {
    let mut b = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(http.retry)
        .with_client_options(http.client.with_allow_http(s.allow_http))
        .with_allow_http(s.allow_http);
    if !s.endpoint.is_empty() {
        b = b.with_endpoint(&s.endpoint);
    }
    if !s.region.is_empty() {
        b = b.with_region(&s.region);
    } else if std::env::var_os("AWS_REGION").is_none()
        && std::env::var_os("AWS_DEFAULT_REGION").is_none()
    {
        b = b.with_region("us-east-1");
    }
    b = b.with_virtual_hosted_style_request(!s.path_style);
    if let Some(k) = read_secret(url, "output.s3.access_key_id_file", &s.access_key_id_file)? {
        b = b.with_access_key_id(k);
    }
    let secret_key = "output.s3.secret_access_key_file";
    if let Some(k) = read_secret(url, secret_key, &s.secret_access_key_file)? {
        b = b.with_secret_access_key(k);
    }
    require_credentials(url, s.credentials, has_credentials(&b), CREDENTIALS)?;
    built(url, b.build())
}

fn has_credentials(b: &AmazonS3Builder) -> bool {
    let has = |k: K| b.get_config_value(&k).is_some_and(|v| !v.is_empty());
    has(K::AccessKeyId)
        || has(K::SecretAccessKey)
        || (has(K::WebIdentityTokenFile) && has(K::RoleArn))
        || has(K::ContainerCredentialsRelativeUri)
        || has(K::ContainerCredentialsFullUri)
        || b.get_config_value(&K::SkipSignature).as_deref() == Some("true")
}
