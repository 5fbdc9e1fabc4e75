package dev.gdsloader.service.server;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server's TLS identity read and checked before the server binds: its PEM certificate chain and its PEM private key
 * are parsed the way gRPC's Netty reads them ({@code SslContext.toPrivateKey} without Bouncy Castle: a
 * {@code -----BEGIN ... PRIVATE KEY-----} block holding an unencrypted PKCS#8 RSA, DSA or EC key; certificates from
 * {@code -----BEGIN CERTIFICATE-----} blocks, the server's first), and the key must be the private half of the first
 * certificate's public key: a random challenge signed with the key ({@code SHA256withRSA}, {@code SHA256withECDSA},
 * {@code SHA256withDSA}) must verify with the certificate's public key. Without this check a mismatched key was
 * accepted at start and every handshake failed afterwards (issue 21, finding 5). Immutable; thread-safe.
 *
 * @param chain the certificates of the chain file, in file order (the server's first)
 * @param key the private key
 */
record TlsIdentity(List<X509Certificate> chain, PrivateKey key) {
    /** A PEM block: its label and its base64 body. */
    private static final Pattern BLOCK = Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    /** The key algorithms Netty's PEM reader tries, in its order. */
    private static final List<String> KEY_ALGORITHMS = List.of("RSA", "DSA", "EC");

    TlsIdentity {
        chain = List.copyOf(chain);
    }

    /**
     * Reads both files and checks the key against the first certificate.
     *
     * @param certificateChain PEM certificate chain, the server's certificate first
     * @param privateKey PEM private key, unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY})
     * @return the identity
     * @throws IOException one line naming the file(s) and what was expected: a file that cannot be read, a chain
     *     without a {@code CERTIFICATE} block or whose first certificate cannot be parsed, a key file without a
     *     private key block, an encrypted or PKCS#1/SEC1 key, a key that is not PKCS#8 RSA, DSA or EC, or a key that
     *     is not the certificate's (naming both files and both keys' algorithms and sizes)
     */
    static TlsIdentity read(Path certificateChain, Path privateKey) throws IOException {
        List<X509Certificate> chain = certificates(certificateChain, read(certificateChain, "certificate"));
        PrivateKey key = privateKey(privateKey);
        PublicKey pub = chain.getFirst().getPublicKey();
        if (!matches(key, pub)) {
            throw new IOException("TLS key " + privateKey + " does not match the certificate " + certificateChain + ": the key ("
                    + describe(key) + ") is not the private key of the certificate's public key (" + describe(pub) + ", subject "
                    + chain.getFirst().getSubjectX500Principal().getName() + "): give the key the certificate was issued for");
        }
        return new TlsIdentity(chain, key);
    }

    /**
     * @param file where {@code pem} was read from (for messages)
     * @param pem the file's bytes
     * @return the certificates of the file's {@code CERTIFICATE} blocks, in order; at least one
     * @throws IOException naming the file if it holds no certificate, or a block that is not an X.509 certificate
     */
    static List<X509Certificate> certificates(Path file, byte[] pem) throws IOException {
        String text = new String(pem, StandardCharsets.ISO_8859_1);
        List<X509Certificate> out = new ArrayList<>();
        CertificateFactory cf;
        try {
            cf = CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException("the JDK has no X.509 certificate factory", e);
        }
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            if (!m.group(1).equals("CERTIFICATE")) {
                continue;
            }
            try {
                out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(decode(m.group(2), file, m.start()))));
            } catch (CertificateException e) {
                throw new IOException("TLS certificate " + file + ": the CERTIFICATE block at character " + m.start()
                        + " is not an X.509 certificate (" + e.getMessage() + ")", e);
            }
        }
        if (out.isEmpty()) {
            throw new IOException("TLS certificate " + file + " holds no '-----BEGIN CERTIFICATE-----' block: expected a PEM "
                    + "certificate chain, the server's certificate first");
        }
        return out;
    }

    private static PrivateKey privateKey(Path file) throws IOException {
        String text = new String(read(file, "key"), StandardCharsets.ISO_8859_1);
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            String label = m.group(1);
            if (!label.endsWith("PRIVATE KEY")) {
                continue;
            }
            if (label.equals("ENCRYPTED PRIVATE KEY")) {
                throw new IOException("TLS key " + file + " is encrypted (BEGIN ENCRYPTED PRIVATE KEY): expected an unencrypted "
                        + "PKCS#8 key (openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY8)");
            }
            if (!label.equals("PRIVATE KEY")) {
                throw new IOException("TLS key " + file + " is a '" + label + "' (PKCS#1 or SEC1): expected an unencrypted PKCS#8 "
                        + "key, BEGIN PRIVATE KEY (openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY8)");
            }
            byte[] der = decode(m.group(2), file, m.start());
            for (String algorithm : KEY_ALGORITHMS) {
                try {
                    return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
                } catch (GeneralSecurityException | IllegalArgumentException e) {
                    // not of this algorithm (or not PKCS#8): the next
                }
            }
            throw new IOException("TLS key " + file + ": the PRIVATE KEY block is not a PKCS#8 RSA, DSA or EC key (the ones the "
                    + "server's TLS reads)");
        }
        throw new IOException("TLS key " + file + " holds no '-----BEGIN PRIVATE KEY-----' block: expected an unencrypted PKCS#8 "
                + "PEM key");
    }

    private static byte[] read(Path file, String what) throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IOException("TLS " + what + " " + file + " cannot be read: " + e, e);
        }
    }

    private static byte[] decode(String body, Path file, int at) throws IOException {
        try {
            return Base64.getMimeDecoder().decode(body.strip());
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": the PEM block at character " + at + " is not base64 (" + e.getMessage() + ")", e);
        }
    }

    /** @return whether a challenge signed with {@code key} verifies with {@code pub} */
    private static boolean matches(PrivateKey key, PublicKey pub) {
        if (!key.getAlgorithm().equals(pub.getAlgorithm())) {
            return false;
        }
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "DSA" -> "SHA256withDSA";
            default -> throw new IllegalStateException("unexpected key algorithm " + key.getAlgorithm());
        };
        byte[] challenge = new byte[32];
        new SecureRandom().nextBytes(challenge);
        try {
            Signature sign = Signature.getInstance(algorithm);
            sign.initSign(key);
            sign.update(challenge);
            byte[] signature = sign.sign();
            Signature verify = Signature.getInstance(algorithm);
            verify.initVerify(pub);
            verify.update(challenge);
            return verify.verify(signature);
        } catch (GeneralSecurityException e) {
            return false; // e.g. EC keys on different curves: not the same key
        }
    }

    /** @return e.g. {@code RSA 2048 bits}, {@code EC secp256r1} */
    private static String describe(java.security.Key k) {
        if (k instanceof java.security.interfaces.RSAKey r) {
            return k.getAlgorithm() + " " + r.getModulus().bitLength() + " bits";
        }
        if (k instanceof java.security.interfaces.ECKey e) {
            return k.getAlgorithm() + " " + e.getParams().getCurve().getField().getFieldSize() + " bits";
        }
        return k.getAlgorithm();
    }
}
