// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice One call of a batch: send `value` wei and `data` to `to`.
struct Call {
    address to;
    uint256 value;
    bytes data;
}

/// @notice The errors of WalletAccount. WalletFactory passes them through from the accounts it creates and calls,
///         so it declares them too, and each contract's ABI decodes them.
interface WalletAccountErrors {
    /// @notice `initialize` was called on an account that already has an owner.
    error AlreadyInitialized();

    /// @notice The owner given to `initialize` is the zero address.
    error InvalidOwner();

    /// @notice The batch's deadline has passed.
    error DeadlineExpired(uint256 deadline);

    /// @notice The signature is malformed, not in canonical form, or not the owner's over this batch and nonce.
    error InvalidSignature();

    /// @notice Call `index` of the batch reverted with `reason` (its raw revert data); nothing of the batch happened.
    error CallFailed(uint256 index, bytes reason);
}

/// @title WalletAccount
/// @notice A smart account that executes batches of calls signed by its owner, an externally owned account.
/// @dev Used as a user's wallet and as an automation account. Anyone (the gateway's relayer) may submit a signed
///      batch and pays its gas, so the owner key never needs funds. A batch is signed with EIP-712
///      (https://eips.ethereum.org/EIPS/eip-712) over (calls, nonce, deadline) in a domain holding the chain id and
///      this account's address, so a signature is valid once, on one chain, for one account, until its deadline.
///      Accounts are EIP-1167 clones made by WalletFactory, which initialises each in the transaction that creates
///      it; the implementation contract itself is locked by its constructor.
contract WalletAccount is WalletAccountErrors {
    /// @dev keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    /// @dev The EIP-712 domain name; the off-chain signer uses the same string.
    bytes32 private constant NAME_HASH = keccak256("WalletAccount");

    /// @dev The EIP-712 domain version.
    bytes32 private constant VERSION_HASH = keccak256("1");

    /// @dev keccak256("Call(address to,uint256 value,bytes data)")
    bytes32 private constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");

    /// @dev The primary type; referenced struct types follow it, sorted by name (EIP-712 encodeType).
    bytes32 private constant BATCH_TYPEHASH =
        keccak256("Batch(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data)");

    /// @dev Half the order of the secp256k1 group: a valid s is at most this (EIP-2), so each signature has one form.
    uint256 private constant SECP256K1N_HALF = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// @notice The externally owned account whose signature authorises batches.
    address public owner;

    /// @notice The nonce the next batch must be signed with; it grows by one with each executed batch.
    uint256 public nonce;

    /// @dev Set once, by `initialize` on a clone or by the constructor on the implementation.
    bool private initialized;

    /// @notice Emitted once, when the account gets its owner.
    event Initialized(address indexed owner);

    /// @notice Emitted for every executed batch.
    event BatchExecuted(uint256 indexed nonce, bytes32 digest);

    /// @dev Locks the implementation: only clones, with fresh storage, can be initialised.
    constructor() {
        initialized = true;
    }

    /// @notice Sets the owner; callable once. WalletFactory calls it in the transaction that creates the clone.
    function initialize(address owner_) external {
        if (initialized) revert AlreadyInitialized();
        if (owner_ == address(0)) revert InvalidOwner();
        initialized = true;
        owner = owner_;
        emit Initialized(owner_);
    }

    /// @notice Accepts ETH.
    receive() external payable {}

    /// @notice Runs `calls` in order if `signature` is the owner's EIP-712 signature over them, the current nonce and
    ///         `deadline`. Either every call succeeds or the whole execution reverts with `CallFailed`.
    /// @param calls The calls to make from this account.
    /// @param deadline The last block timestamp at which the batch may run.
    /// @param signature The owner's 65-byte signature (r, s, v) over `batchDigest(calls, nonce(), deadline)`.
    function execute(Call[] calldata calls, uint256 deadline, bytes calldata signature) external {
        if (block.timestamp > deadline) revert DeadlineExpired(deadline);
        uint256 batchNonce = nonce;
        bytes32 digest = _batchDigest(calls, batchNonce, deadline);
        address signer = _recover(digest, signature);
        // `_recover` never returns zero, and an initialised account has a non-zero owner, so an uninitialised
        // account or the implementation (owner zero) can never execute.
        if (signer != owner) revert InvalidSignature();
        // Consumed before any call, so a call re-entering `execute` cannot reuse this signature.
        nonce = batchNonce + 1;

        for (uint256 i = 0; i < calls.length; ++i) {
            Call calldata c = calls[i];
            (bool success, bytes memory reason) = c.to.call{value: c.value}(c.data);
            if (!success) revert CallFailed(i, reason);
        }
        emit BatchExecuted(batchNonce, digest);
    }

    /// @notice The EIP-712 digest the owner signs to authorise `calls` at `batchNonce` until `deadline`.
    function batchDigest(Call[] calldata calls, uint256 batchNonce, uint256 deadline) external view returns (bytes32) {
        return _batchDigest(calls, batchNonce, deadline);
    }

    /// @notice The EIP-712 domain separator: name "WalletAccount", version "1", this chain, this account.
    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @dev hashTypedData: "\x19\x01" ‖ domainSeparator ‖ hashStruct(Batch).
    function _batchDigest(Call[] calldata calls, uint256 batchNonce, uint256 deadline)
        private
        view
        returns (bytes32)
    {
        bytes32[] memory callHashes = new bytes32[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            Call calldata c = calls[i];
            callHashes[i] = keccak256(abi.encode(CALL_TYPEHASH, c.to, c.value, keccak256(c.data)));
        }
        // An array is encoded as the keccak256 of its members' hashStruct values, concatenated.
        bytes32 structHash =
            keccak256(abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(callHashes)), batchNonce, deadline));
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    /// @dev ECDSA recovery that accepts only the canonical form of a signature: 65 bytes, s in the lower half of the
    ///      curve order, v 27 or 28. Never returns the zero address (what `ecrecover` answers for an invalid one).
    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address signer) {
        if (signature.length != 65) revert InvalidSignature();
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > SECP256K1N_HALF) revert InvalidSignature();
        if (v != 27 && v != 28) revert InvalidSignature();
        signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
    }
}
