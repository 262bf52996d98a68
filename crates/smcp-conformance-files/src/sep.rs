//! The SEP-2631 sentences the checks test. Every check cites one [`Cite`]; the sentence is
//! quoted verbatim from the SEP text (seed 002 = PR #2631 head) or, where the SEP is silent, from
//! the project decision in `REQUIREMENTS.md` (marked `[DESIGN]`).

use crate::spec_reference::SpecReference;

/// Where the SEP lives.
pub const SEP_URL: &str = "https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2631";

/// A check's name, description and the SEP sentence it tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cite {
    /// Check name (CamelCase, like the official suite).
    pub name: &'static str,
    /// What the check verifies.
    pub description: &'static str,
    /// SEP section, e.g. `§6 Upload Negotiation`.
    pub section: &'static str,
    /// The quoted sentence.
    pub sentence: &'static str,
}

impl Cite {
    /// The `specReferences` entry.
    pub fn reference(&self) -> SpecReference {
        let anchor: String = self
            .section
            .trim_start_matches('§')
            .chars()
            .filter_map(|c| match c {
                'A'..='Z' => Some(c.to_ascii_lowercase()),
                'a'..='z' | '0'..='9' | '-' => Some(c),
                ' ' | '.' => Some('-'),
                _ => None,
            })
            .collect();
        SpecReference {
            id: format!("SEP-2631 {}", self.section),
            url: format!("{SEP_URL}#{anchor}"),
            sentence: self.sentence.to_owned(),
        }
    }
}

macro_rules! cites {
    ($($(#[$m:meta])* $id:ident = ($name:literal, $desc:literal, $sec:literal, $sent:literal);)*) => {
        $($(#[$m])* pub const $id: Cite = Cite { name: $name, description: $desc, section: $sec, sentence: $sent };)*
    };
}

cites! {
    /// Server advertisement.
    SERVER_ADVERTISES = ("ServerAdvertisesFiles", "server/discover advertises capabilities.files {upload, download, transports:[\"https\"]}", "§2 Capabilities",
        "Clients that support out-of-band file transfer declare a new files capability [...] transports: supported out-of-band transport families. This SEP initially defines https, including multipart form uploads. [DESIGN A15.92: the server mirrors the shape in DiscoverResult.capabilities.files]");
    /// -32021 without the capability.
    REQUIRES_CAPABILITY = ("FilesMethodRequiresCapability", "files/* without the files capability on the request is refused with HTTP 400 + -32021 naming requiredCapabilities.files", "§2 Capabilities",
        "Clients that support out-of-band file transfer declare a new files capability [...] [DESIGN A15.91: files/authorizeUpload/authorizeDownload from a client that did not declare files -> -32021 with requiredCapabilities: {\"files\": {...}}]");
    /// -32601 for unsupported files methods.
    METHOD_NOT_FOUND = ("UnsupportedFilesMethod", "an unknown files/* method is answered with -32601 (HTTP 404 on Streamable HTTP)", "§10 Error Handling",
        "-32601 when files/authorizeUpload or files/authorizeDownload is not supported.");
    /// Fixture tools exist.
    FIXTURES = ("FixtureToolsPresent", "the documented fixture tools are listed by tools/list", "§5 Declaring File-Valued Inputs",
        "Tools and elicitation forms declare file-valued fields using SEP-2356's x-mcp-file keyword on URI string schema properties.");
    /// x-mcp-file placement.
    DECL_PLACEMENT = ("XMcpFileOnUriString", "x-mcp-file sits only on a {type: string, format: uri} property (or array items on the tool surface)", "§5 Declaring File-Valued Inputs",
        "x-mcp-file MUST appear only where SEP-2356 allows it: on a URI string schema property.");
    /// Descriptor members well-formed.
    DECL_SHAPE = ("XMcpFileDescriptorWellFormed", "accept is a list of strings, maxSize a non-negative integer, transferModes a subset of inline/upload", "§5 Declaring File-Valued Inputs",
        "File input descriptors MAY include: accept: a list of MIME types or dot-prefixed file extensions. [...] maxSize: maximum accepted size in bytes for each individual file. [...] transferModes: optional list of allowed transfer modes for the field.");
    /// Inline accepted.
    INLINE_ACCEPTED = ("InlineDataUriAccepted", "a well-formed data: URI within the declared limits is accepted and decoded to the right bytes", "§4 File Input Values and File Outputs",
        "Inline input transfer MUST use SEP-2356 data: URIs. [SEP-2356 via A17.103: servers MUST accept well-formed values in both the ;base64 and the percent-encoded form]");
    /// maxSize boundary.
    MAX_SIZE = ("MaxSizeEnforced", "maxSize counts decoded bytes: exactly maxSize passes, maxSize+1 is rejected with reason maxSizeExceeded", "§5 Declaring File-Valued Inputs",
        "maxSize: maximum accepted size in bytes for each individual file. For inline data: URI values this is the decoded byte size; for file URI values this is the uploaded file byte size enforced during upload negotiation and subsequent request validation.");
    /// accept matching.
    ACCEPT = ("AcceptEnforced", "accept compares the media type of the value case-insensitively, ignoring parameters; image/* matches any image subtype", "§5 Declaring File-Valued Inputs",
        "As in SEP-2356, extension entries are picker hints only; server-side validation compares the media type portion of the submitted URI value.");
    /// transferModes.
    TRANSFER_MODES = ("TransferModesEnforced", "a field restricted to [\"inline\"] refuses a file URI and one restricted to [\"upload\"] refuses a data: URI", "§4 File Input Values and File Outputs",
        "Clients MUST use one of the listed modes when transferModes is present. [DESIGN A21.127: the server rejects a value in a mode not listed with reason transferModeNotAllowed]");
    /// Bad argument shape.
    TOOL_ERROR_SHAPE = ("BadFileArgumentIsToolError", "a rejected file argument yields CallToolResult isError:true with structuredContent {argument, reason}", "§10 Error Handling",
        "Servers SHOULD include machine-readable details when rejecting a file, such as: { \"reason\": \"maxSizeExceeded\", ... } [DESIGN A21.127: inside tools/call a bad file argument is an input validation error => isError: true]");
    /// authorizeUpload shape.
    UPLOAD_SHAPE = ("AuthorizeUploadResultShape", "files/authorizeUpload returns resultType complete, file: FileValue, upload: FileTransferDescriptor with transport https, method, url and expiresAt", "§6 Upload Negotiation",
        "The server responds with an upload authorization [...] [REQUIREMENTS C2 (@imaad786, @Aaronontheweb): descriptors carry expiresAt]");
    /// Descriptor transport protected.
    DESCRIPTOR_HTTPS = ("DescriptorTransportProtected", "descriptor URLs are https (loopback http only in development mode)", "Security Implications",
        "Upload and download descriptors are bearer-style capabilities and MUST be scoped, time-limited, and transport-protected.");
    /// Upload works as described.
    UPLOAD = ("UploadPerDescriptor", "bytes uploaded exactly as the descriptor says (raw body with its method and headers, or multipart POST with every field plus fileField) are accepted", "§6 Upload Negotiation",
        "The client uploads bytes out-of-band using the provided descriptor, then passes the returned file URI string in tools/call or the elicitation result.");
    /// File URI accepted.
    FILE_URI_ACCEPTED = ("FileUriAcceptedInToolCall", "an uploaded file URI is accepted by tools/call and resolves to the uploaded bytes (digest matches)", "§4 File Input Values and File Outputs",
        "Servers that returned a file URI from files/authorizeUpload MUST accept that URI in an x-mcp-file field where they would otherwise accept a data: URI, subject to the same declared accept and maxSize constraints.");
    /// Digest mismatch.
    DIGEST_MISMATCH = ("DigestMismatchRejected", "an upload whose bytes do not match the authorized digest is rejected with reason digestMismatch and its URI is not usable", "§6 Upload Negotiation",
        "When a digest was provided during authorization, the server MUST reject a completed upload whose bytes do not match it.");
    /// Distinct reason.
    DIGEST_DISTINCT = ("DigestMismatchDistinctReason", "the digest-mismatch rejection is distinguishable from other upload validation failures (size)", "§10 Error Handling",
        "Servers SHOULD distinguish digest mismatches from other upload validation failures when they reject an authorized upload whose bytes do not match the declared digest.");
    /// Size mismatch.
    SIZE_MISMATCH = ("SizeMismatchRejected", "an upload whose byte count differs from the authorized size is rejected (sizeMismatch / maxSizeExceeded)", "Security Implications",
        "Servers MUST validate MIME type, size, and file content according to their own policy rather than trusting client metadata.");
    /// The documented status of a size mismatch.
    SIZE_STATUS = ("SizeMismatchStatus", "an upload one byte short of the authorized size is refused with HTTP 413 and reason sizeMismatch", "Security Implications",
        "Servers MUST validate MIME type, size, and file content according to their own policy rather than trusting client metadata. [DESIGN A21.128: data-plane errors 4xx with {\"reason\"}, 413 for size; docs/files/upload.md: a byte count different from the authorized size is rejected with 413 sizeMismatch]");
    /// Malformed size at negotiation.
    INVALID_SIZE = ("InvalidSizeRejected", "files/authorizeUpload with a size that is not a non-negative integer is refused with -32602 carrying data.reason invalidSize", "§10 Error Handling",
        "Servers SHOULD include machine-readable details when rejecting a file [DESIGN A21.126; docs/files/errors.md: a -32602 for a file always carries data.reason; invalidSize]");
    /// Content sniffing.
    CONTENT_SNIFFED = ("ContentCheckedAgainstAccept", "a file whose bytes are an executable, declared as an accepted image type, is rejected with mimeTypeNotAccepted", "Security Implications",
        "Servers MUST validate MIME type, size, and file content according to their own policy rather than trusting client metadata.");
    /// Inert downloads.
    DOWNLOAD_INERT = ("DownloadServedAsAttachment", "downloads carry X-Content-Type-Options: nosniff and Content-Disposition: attachment, so a file is never active content of the server's origin", "Security Implications",
        "Upload and download descriptors are bearer-style capabilities and MUST be scoped, time-limited, and transport-protected. [DESIGN docs/files/security.md Validation 5: downloads are served as inert attachments]");
    /// The documented status of a replayed descriptor.
    REPLAY_STATUS = ("RedeemedDescriptorStatus", "a second upload with a redeemed descriptor is refused with HTTP 410 and reason descriptorExpired", "§1 Design Principles",
        "A usable file URI MUST identify one immutable byte sequence for its usable lifetime. [DESIGN A21.128: 410 for expired descriptors; docs/files/errors.md: 410 descriptorExpired, also for a redeemed, single-use descriptor]");
    /// Invalid digest syntax.
    INVALID_DIGEST = ("InvalidDigestRejected", "authorizeUpload with an unsupported digest algorithm or a malformed value is refused with -32602", "§10 Error Handling",
        "-32602 when a file URI is malformed or violates declared constraints such as accept or maxSize. [A19.119: unknown algorithm -> -32602 reason unsupportedDigestAlgorithm; bad value -> invalidDigest]");
    /// Malformed / foreign URIs.
    MALFORMED_URI = ("MalformedFileUriRejected", "malformed values, other schemes and local paths in a file field are rejected", "§7 Tool Invocation with Files",
        "Servers MUST treat file arguments as URI strings whose file URI values are resolved through the upload contract, not as local filesystem paths or storage-specific handles.");
    /// Unknown URI.
    UNKNOWN_URI = ("UnknownFileUriRejected", "a well-formed but never-issued file URI is rejected (tools/call isError, authorizeDownload -32602 fileUnavailable)", "§8 File Outputs",
        "Servers MUST reject expired, unauthorized, or unknown file URIs with an appropriate JSON-RPC error.");
    /// Replay.
    REPLAY = ("UploadDescriptorReplayRefused", "a second upload with an already redeemed descriptor is refused (4xx) and does not change the file", "§1 Design Principles",
        "A usable file URI MUST identify one immutable byte sequence for its usable lifetime. Changed bytes require a new file URI.");
    /// Expiry.
    EXPIRED = ("ExpiredDescriptorRefused", "an upload after expiresAt is refused with 410 descriptorExpired", "Security Implications",
        "Upload and download descriptors are bearer-style capabilities and MUST be scoped, time-limited, and transport-protected.");
    /// Namespaces.
    NAMESPACES = ("FileUrisDistinctFromResourceUris", "file URIs use a scheme or authority no listed resource URI uses", "§4 URI Namespaces",
        "Implementations SHOULD use distinct URI schemes or authorities for resource URIs and file URIs.");
    /// resources/read not required.
    RESOURCES_READ = ("ResourcesReadNotRequired", "resources/read of a file URI may fail; the file stays usable through the files/* contract", "§4 URI Namespaces",
        "Clients MUST NOT assume that a file URI can be passed to resources/read. Servers MUST NOT require clients to treat file URIs as resources.");
    /// Generated output.
    OUTPUT_VALUE = ("GeneratedFileValue", "files_generate returns a FileValue (uri, size, digest) in structuredContent", "§8 File Outputs",
        "Tool results may return FileValue objects in either structuredContent or a new content item of type file");
    /// File content gating.
    OUTPUT_CONTENT = ("FileContentGatedOnDownload", "a {type: file} content block is sent to clients that declared files.download and never to others", "§8 File Outputs",
        "Tool results may return FileValue objects in either structuredContent or a new content item of type file [DESIGN A15.91: only emit FileContent to clients that declared files.download]");
    /// authorizeDownload shape.
    DOWNLOAD_SHAPE = ("AuthorizeDownloadResultShape", "files/authorizeDownload returns resultType complete, file: FileValue and download: FileTransferDescriptor (GET, url, expiresAt)", "§8 File Outputs",
        "The server responds with an AuthorizedFile that includes the stable file reference and a download descriptor in parallel");
    /// Downloaded bytes match.
    DOWNLOAD_BYTES = ("DownloadedBytesMatch", "the downloaded bytes match the FileValue's size and sha-256 digest", "§4 File Input Values and File Outputs",
        "A digest describes the complete immutable byte sequence identified by the file URI.");
    /// MRTR elicitation.
    MRTR = ("MrtrFileElicitation", "a file elicitation arrives as InputRequiredResult with an x-mcp-file field and the retry with a data: or file URI completes", "§5 Declaring File-Valued Inputs",
        "This SEP supports elicitation by allowing the eventual value for an x-mcp-file field to be either a SEP-2356 data: URI or, when out-of-band transfer is used, a file URI prepared through files/authorizeUpload. [REQUIREMENTS C2 @chrisbennight: under 2026-07-28 this is input_required + inputResponses]");
    // ---- client leg ----
    /// Client capability.
    CLIENT_DECLARES = ("ClientDeclaresFilesCapability", "requests that use files/* carry files {upload|download, transports [https]} in _meta clientCapabilities", "§2 Capabilities",
        "Clients that support out-of-band file transfer declare a new files capability");
    /// Client inline.
    CLIENT_INLINE = ("ClientInlinesWhenInlineOnly", "for transferModes [\"inline\"] the client sends a data: URI with the file's bytes and never calls files/authorizeUpload", "§4 File Input Values and File Outputs",
        "Clients MUST use a data: URI when transferModes is [\"inline\"].");
    /// Client upload.
    CLIENT_UPLOAD = ("ClientUploadsWhenUploadOnly", "for transferModes [\"upload\"] the client calls files/authorizeUpload, uploads per descriptor and sends the file URI, never a data: URI", "§4 File Input Values and File Outputs",
        "Clients MUST use files/authorizeUpload and send the returned file URI when transferModes is [\"upload\"].");
    /// Client multipart boundary.
    CLIENT_DIGEST_SENT = ("ClientSendsDigest", "the client includes the sha-256 digest of the file in files/authorizeUpload", "§6 Upload Negotiation",
        "The client SHOULD include the expected digest when it already knows it");
    /// Client verifies download.
    CLIENT_VERIFY = ("ClientVerifiesDownload", "the client downloads through files/authorizeDownload, keeps a correct file and rejects one whose digest does not match", "§8 File Outputs",
        "Clients MUST verify the received byte count and digest when those values are present on a file they download.");
    /// Insecure descriptor.
    CLIENT_INSECURE = ("ClientRefusesInsecureDescriptor", "the client refuses an http:// (non-loopback) upload descriptor and does not use its file URI", "Security Implications",
        "Clients MUST not follow untrusted upload or download descriptors over insecure transports unless explicitly negotiated by a future SEP.");
    /// Client MRTR.
    CLIENT_MRTR = ("ClientAnswersFileElicitation", "the client answers an input_required file elicitation by inlining or uploading and retries with the URI in inputResponses and the echoed requestState", "§5 Declaring File-Valued Inputs",
        "This SEP supports elicitation by allowing the eventual value for an x-mcp-file field to be either a SEP-2356 data: URI or, when out-of-band transfer is used, a file URI prepared through files/authorizeUpload.");
}
