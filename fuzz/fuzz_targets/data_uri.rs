//! `data:` URIs (SEP-2356 inline files): the size computed from the text, used to enforce
//! `maxSize` before decoding, is the size decoding produces, and the limit is exact.

#![no_main]

use libfuzzer_sys::fuzz_target;
use smcp_proto::ext::data_uri::{DataUri, DataUriError};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(uri) = DataUri::parse(text) else {
        return;
    };
    let _ = (uri.media_type(), uri.essence(), uri.is_base64());
    let len = uri.decoded_len();
    let decoded = uri.decode(None);
    if let Ok(bytes) = &decoded {
        assert_eq!(bytes.len() as u64, len, "decoded_len disagrees with decode");
    }
    assert_eq!(
        uri.decode(Some(len)),
        decoded,
        "the limit equal to the size"
    );
    if len > 0 {
        assert_eq!(
            uri.decode(Some(len - 1)),
            Err(DataUriError::TooLarge {
                max: len - 1,
                actual: len
            })
        );
    }
});
