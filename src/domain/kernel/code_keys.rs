//! Keys for codes at rest: AES-256-GCM encryption (random nonce per code, the merchant as
//! associated data, versioned so the key can be rotated) and a separate HMAC-SHA256 key for the
//! lookup hash that makes codes unique per merchant without storing them in the clear.

use crate::domain::MerchantId;
use std::collections::BTreeMap;
use std::path::Path;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot read the code key file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write the code key file {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("the code key file {0} is not valid: {1}")]
    Invalid(String, String),
    #[error("a code key must be 64 hex characters (32 bytes)")]
    BadKey,
    #[error("no encryption key of version {0}")]
    UnknownVersion(i64),
    #[error("a code could not be decrypted (wrong key or tampered data)")]
    Decrypt,
}

#[derive(Serialize, Deserialize)]
struct KeyFile {
    /// Version used for new codes.
    current: i64,
    /// Every encryption key ever used, by version: old codes stay readable after a rotation.
    encryption_keys: BTreeMap<String, String>,
    /// The lookup-hash key. Changing it would break duplicate detection, so it is not versioned.
    hash_key: String,
}

pub struct CodeKeys {
    current: i64,
    ciphers: BTreeMap<i64, Aes256Gcm>,
    hash_key: Vec<u8>,
}

impl std::fmt::Debug for CodeKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("CodeKeys")
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

fn key_bytes(hex_key: &str) -> Result<Vec<u8>, KeyError> {
    let b = hex::decode(hex_key.trim()).map_err(|_| KeyError::BadKey)?;
    if b.len() != 32 {
        return Err(KeyError::BadKey);
    }
    Ok(b)
}

fn random_key() -> String {
    let mut k = [0u8; 32];
    rand::rng().fill_bytes(&mut k);
    hex::encode(k)
}

impl CodeKeys {
    /// Keys given as such (a deployment's environment, read by `config`): the encryption key
    /// of `version` and the hash key, 64 hex characters each.
    pub fn given(version: i64, enc: &str, mac: &str) -> Result<CodeKeys, KeyError> {
        let mut keys = BTreeMap::new();
        keys.insert(version.to_string(), enc.to_string());
        CodeKeys::from_parts(version, &keys, mac)
    }

    /// Keys from the key file, which is created with fresh random keys on first use. Returns the
    /// keys and whether a new file was written.
    pub fn load(file: &Path) -> Result<(CodeKeys, bool), KeyError> {
        let path = file.display().to_string();
        if file.exists() {
            let text = std::fs::read_to_string(file).map_err(|source| KeyError::Read {
                path: path.clone(),
                source,
            })?;
            let kf: KeyFile = serde_json::from_str(&text)
                .map_err(|e| KeyError::Invalid(path.clone(), e.to_string()))?;
            return Ok((
                CodeKeys::from_parts(kf.current, &kf.encryption_keys, &kf.hash_key)?,
                false,
            ));
        }
        let mut encryption_keys = BTreeMap::new();
        encryption_keys.insert("1".to_string(), random_key());
        let kf = KeyFile {
            current: 1,
            encryption_keys,
            hash_key: random_key(),
        };
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::infra::db::create_private_dir(dir).map_err(|source| KeyError::Write {
                path: path.clone(),
                source,
            })?;
        }
        let text = serde_json::to_string_pretty(&kf)
            .map_err(|e| KeyError::Invalid(path.clone(), e.to_string()))?;
        write_private(file, &text).map_err(|source| KeyError::Write { path, source })?;
        Ok((
            CodeKeys::from_parts(kf.current, &kf.encryption_keys, &kf.hash_key)?,
            true,
        ))
    }

    fn from_parts(
        current: i64,
        enc: &BTreeMap<String, String>,
        mac: &str,
    ) -> Result<CodeKeys, KeyError> {
        let mut ciphers = BTreeMap::new();
        for (v, k) in enc {
            let version: i64 = v.parse().map_err(|_| KeyError::BadKey)?;
            let cipher = Aes256Gcm::new_from_slice(&key_bytes(k)?).map_err(|_| KeyError::BadKey)?;
            ciphers.insert(version, cipher);
        }
        if !ciphers.contains_key(&current) {
            return Err(KeyError::UnknownVersion(current));
        }
        Ok(CodeKeys {
            current,
            ciphers,
            hash_key: key_bytes(mac)?,
        })
    }

    pub fn current_version(&self) -> i64 {
        self.current
    }

    /// (ciphertext, nonce) of a code for a merchant, with the current key.
    pub fn encrypt(
        &self,
        merchant_id: MerchantId,
        code: &str,
    ) -> Result<(Vec<u8>, Vec<u8>), KeyError> {
        let cipher = self
            .ciphers
            .get(&self.current)
            .ok_or(KeyError::UnknownVersion(self.current))?;
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let aad = merchant_id.0.to_be_bytes();
        let ct = cipher
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: code.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| KeyError::Decrypt)?;
        Ok((ct, nonce.to_vec()))
    }

    pub fn decrypt(
        &self,
        merchant_id: MerchantId,
        version: i64,
        ciphertext: &[u8],
        nonce: &[u8],
    ) -> Result<String, KeyError> {
        let cipher = self
            .ciphers
            .get(&version)
            .ok_or(KeyError::UnknownVersion(version))?;
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| KeyError::Decrypt)?;
        let aad = merchant_id.0.to_be_bytes();
        let pt = cipher
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| KeyError::Decrypt)?;
        String::from_utf8(pt).map_err(|_| KeyError::Decrypt)
    }

    /// The keyed hash of a normalised code, scoped to the merchant: HMAC-SHA256 truncated to 128
    /// bits, ample against collisions and half the size in the unique index (imports get faster).
    pub fn hash(&self, merchant_id: MerchantId, normalized: &str) -> [u8; 16] {
        self.keyed(merchant_id.0, normalized)
    }

    /// HMAC over a domain number and a text: a merchant's id, or 0 (no merchant has it) for the
    /// server's own signatures.
    fn keyed(&self, domain: i64, normalized: &str) -> [u8; 16] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.hash_key)
            .expect("HMAC takes any key length");
        mac.update(&domain.to_be_bytes());
        mac.update(&[0]);
        mac.update(normalized.as_bytes());
        let full = mac.finalize().into_bytes();
        let mut out = [0u8; 16];
        out.copy_from_slice(&full[..16]);
        out
    }
}

impl CodeKeys {
    /// A signature over a form the server issued (the public booking form's token), with the
    /// lookup key and a domain of its own: merchant 0 never exists, and the prefix keeps these
    /// apart from any code.
    pub fn sign_form(&self, data: &str) -> [u8; 16] {
        self.keyed(0, &format!("form-token:{data}"))
    }

    /// Whether `given_hex` is `sign_form(data)` in hex, compared in constant time.
    pub fn form_signed(&self, data: &str, given_hex: &str) -> bool {
        let expected = hex::encode(self.sign_form(data));
        given_hex.len() == expected.len()
            && given_hex
                .bytes()
                .zip(expected.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(text.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_bound_to_their_merchant() {
        let dir = std::env::temp_dir().join(format!("sellable-keys-{}", uuid::Uuid::new_v4()));
        let file = dir.join("keys.json");
        let (keys, created) = CodeKeys::load(&file).unwrap();
        assert!(created);
        let (ct, nonce) = keys.encrypt(MerchantId(7), "GIFT-1234").unwrap();
        assert!(!ct.windows(9).any(|w| w == b"GIFT-1234"));
        assert_eq!(
            keys.decrypt(MerchantId(7), 1, &ct, &nonce).unwrap(),
            "GIFT-1234"
        );
        assert!(
            keys.decrypt(MerchantId(8), 1, &ct, &nonce).is_err(),
            "another merchant's AAD fails"
        );
        let (again, created) = CodeKeys::load(&file).unwrap();
        assert!(!created);
        assert_eq!(
            again.decrypt(MerchantId(7), 1, &ct, &nonce).unwrap(),
            "GIFT-1234",
            "the file keeps the keys"
        );
        assert_eq!(
            keys.hash(MerchantId(7), "A"),
            again.hash(MerchantId(7), "A")
        );
        assert_ne!(keys.hash(MerchantId(7), "A"), keys.hash(MerchantId(8), "A"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
