#!/bin/sh
# Makes the TLS test certificates of this folder (run in a scratch folder, copy the *.pem here).
set -eu
# A test CA, valid until 2126.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout test-ca-key.pem \
    -out test-ca-cert.pem -days 36500 -subj "/CN=entitled test CA"
# `openssl ca` is the only way OpenSSL 3.0 sets both dates of a certificate it signs.
mkdir -p ca && : > ca/index.txt && echo 01 > ca/serial
cat > ca.cnf <<'CNF'
[ca]
default_ca = test
[test]
dir = ca
database = ca/index.txt
serial = ca/serial
new_certs_dir = ca
certificate = test-ca-cert.pem
private_key = test-ca-key.pem
default_md = sha256
policy = anything
copy_extensions = copy
unique_subject = no
[anything]
commonName = supplied
CNF
leaf() { # name, subjectAltName, start, end
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1-key.pem" -out "$1.csr" \
        -subj "/CN=$2" -addext "subjectAltName=$3"
    openssl ca -batch -config ca.cnf -notext -startdate "$4" -enddate "$5" -in "$1.csr" -out "$1-cert.pem"
}
# Issued by the test CA for 127.0.0.1 and localhost, expired on 2021-01-01.
leaf test-expired localhost "DNS:localhost,IP:127.0.0.1" 20200101000000Z 20210101000000Z
# Issued by the test CA for 127.0.0.1 and localhost, valid only from 2100-01-01.
leaf test-future localhost "DNS:localhost,IP:127.0.0.1" 21000101000000Z 21260101000000Z
# Issued by the test CA for example.com only, valid until 2126.
leaf test-example-com example.com "DNS:example.com" 20250101000000Z 21260101000000Z
rm -rf ca ca.cnf ./*.csr test-ca-key.pem
