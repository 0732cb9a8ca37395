/**
 * Runs before every test file. The AWS SDK prints a nine-line notice, once per process, that its
 * releases from 2027 will want Node 22; with a worker per test file that is one copy per file
 * using the SDK. Our engines field already says which Node we support, so tests (and the
 * processes they start with `process.env`) turn it off with the SDK's own switch.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
