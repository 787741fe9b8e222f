//! The network an address belongs to, as fair play counts it: an IPv4
//! /24 or an IPv6 /64. One household, office or phone carrier's block is
//! one network; the whole address is never stored.

use std::net::IpAddr;

/// The network of `address` (as the rate limits see it), or `None` when
/// it is not an address (a test client, a missing peer).
pub(crate) fn network_of(address: &str) -> Option<String> {
    let address: IpAddr = address.parse().ok()?;
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    Some(match address {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            format!("{a}.{b}.{c}.0/24")
        }
        IpAddr::V6(v6) => {
            let [a, b, c, d, ..] = v6.segments();
            format!("{a:x}:{b:x}:{c:x}:{d:x}::/64")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::network_of;

    #[test]
    fn addresses_come_to_their_network() {
        assert_eq!(
            network_of("203.0.113.77").as_deref(),
            Some("203.0.113.0/24")
        );
        assert_eq!(network_of("203.0.113.5"), network_of("203.0.113.250"));
        assert_ne!(network_of("203.0.113.5"), network_of("203.0.114.5"));
        assert_eq!(
            network_of("2001:db8:aa:bb:1:2:3:4").as_deref(),
            Some("2001:db8:aa:bb::/64")
        );
        assert_eq!(
            network_of("2001:db8:aa:bb::9"),
            network_of("2001:db8:aa:bb:ffff::1")
        );
        // An IPv4 client reached over an IPv6 socket is the same client.
        assert_eq!(network_of("::ffff:203.0.113.9"), network_of("203.0.113.1"));
        assert_eq!(network_of("unknown"), None);
        assert_eq!(network_of(""), None);
    }
}
